//go:build !cgo

package cuda_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gocuda/gocuda/cuda"
)

// noDriverText is what the ErrNoDriver error of a build without cgo says:
// the build is the cause, and how to fix it.
const noDriverText = "built without cgo (CGO_ENABLED=0), so it cannot load the CUDA driver: rebuild with CGO_ENABLED=1 and a C compiler"

func TestCallPathIsNoneWithoutCgo(t *testing.T) {
	assert.Equal(t, "none", cuda.CallPath())
}
