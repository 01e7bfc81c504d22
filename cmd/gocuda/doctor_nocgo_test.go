//go:build !cgo

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoctorWithoutCgoBlamesTheBuildAndSaysHowToFixIt(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, doctor(&out, nil, false))
	s := out.String()
	assert.Contains(t, s, "cgo no")
	assert.Contains(t, s, "call path: none")
	assert.Contains(t, s, "this build cannot reach a CUDA driver")
	assert.Contains(t, s, "rebuild with CGO_ENABLED=1 and a C compiler")
	assert.NotContains(t, s, "no usable NVIDIA driver", "the machine is not the cause")
}
