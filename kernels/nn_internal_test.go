package kernels

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/cudabackend"
)

func TestNNKernelNames(t *testing.T) {
	names := kernelNames()
	for _, want := range []string{
		"gocuda_addrowvec_f32", "gocuda_addrowvec_f64", "gocuda_sumcols_f32", "gocuda_sumcols_f64",
		"gocuda_softmaxxent_f32", "gocuda_softmaxxent_f64",
	} {
		assert.Contains(t, names, want)
	}
	assert.NotContains(t, names, "gocuda_softmaxxent_i32")
}

// A kernel the embedded PTX lacks (PTX older than kernels.cu) is an error
// that names the kernel and says how to regenerate the PTX, not a crash.
// gocuda_exp_i32 is never in the PTX, so the test stays meaningful once
// the PTX is current. It needs a GPU: GOCUDA_BACKEND=cuda.
func TestMissingKernelGivesClearError(t *testing.T) {
	b, err := auto.Default()
	require.NoError(t, err)
	dev, err := b.Device(0)
	require.NoError(t, err)
	cu, ok := dev.(*cudabackend.Device)
	if !ok {
		t.Skip("needs the CUDA backend (GOCUDA_BACKEND=cuda): the host backend loads no PTX")
	}
	m, err := moduleFor(cu.Context())
	if errors.Is(err, ErrNoPTX) {
		t.Skip("the embedded PTX is the placeholder")
	}
	require.NoError(t, err)
	_, err = m.function(kernelID(kExp, Int32, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kernel gocuda_exp_i32 is missing from the embedded PTX")
	assert.Contains(t, err.Error(), "scripts/gen-ptx.sh")
}
