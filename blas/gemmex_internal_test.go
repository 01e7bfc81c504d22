package blas

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
)

// TestComputeForEachCapability is the tensor-core decision on the host:
// which cublasComputeType_t a product gets on a GPU of each generation,
// and which products are refused.
func TestComputeForEachCapability(t *testing.T) {
	for _, tc := range []struct {
		name         string
		in           dtype
		major, minor int
		tf32         bool
		want         int
		refused      bool
	}{
		{"float64 anywhere", f64, 6, 0, true, computeF64, false},
		{"float32, TF32 off, Hopper", f32, 9, 0, false, computeF32, false},
		{"float32, TF32 on, Ampere", f32, 8, 0, true, computeF32TF32, false},
		{"float32, TF32 on, Ada", f32, 8, 9, true, computeF32TF32, false},
		{"float32, TF32 on, Turing falls back to float32", f32, 7, 5, true, computeF32, false},
		{"float16 on Volta's tensor cores", f16, 7, 0, false, computeF32, false},
		{"float16 on Pascal, without tensor cores", f16, 6, 1, false, computeF32, false},
		{"bfloat16 on Ampere", bf16, 8, 0, false, computeF32, false},
		{"bfloat16 on Hopper", bf16, 9, 0, true, computeF32, false},
		{"bfloat16 on Turing is refused", bf16, 7, 5, false, 0, true},
		{"bfloat16 on Volta is refused", bf16, 7, 0, false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := computeFor(tc.in, tc.major, tc.minor, tc.tf32)
			if tc.refused {
				require.ErrorIs(t, err, backend.ErrNotSupported)
				assert.Contains(t, err.Error(), "compute capability 7.")
				assert.Contains(t, err.Error(), "bfloat16 products need compute capability 8.0 or newer")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTensorCoresOf(t *testing.T) {
	assert.Equal(t, TensorCores{}, TensorCoresOf(6, 1))
	assert.Equal(t, TensorCores{Float16: true}, TensorCoresOf(7, 5))
	assert.Equal(t, TensorCores{Float16: true, BFloat16: true, TF32: true}, TensorCoresOf(8, 0))
	assert.Equal(t, TensorCores{Float16: true, BFloat16: true, TF32: true}, TensorCoresOf(9, 0))
}

// The cudaDataType_t and cublasComputeType_t numbers are the headers'
// (library_types.h, cublas_api.h): a wrong one is a wrong product on a GPU.
func TestCUDAEnumValues(t *testing.T) {
	assert.Equal(t, []int{0, 1, 2, 14}, []int{f32.cuda(), f64.cuda(), f16.cuda(), bf16.cuda()})
	assert.Equal(t, []int{68, 77, 70, -1}, []int{computeF32, computeF32TF32, computeF64, gemmDefault})
	assert.Equal(t, []uint64{4, 8, 2, 2}, []uint64{f32.size(), f64.size(), f16.size(), bf16.size()})
}

// TestSymbolTableHasTheExEntryPoints: loading cuBLAS resolves the new
// entry points with the others, so a cuBLAS without them fails at load
// with libload's error naming the first one missing, not at the first
// half-precision product.
func TestSymbolTableHasTheExEntryPoints(t *testing.T) {
	if !libload.Available() {
		t.Skip("no symbol table without cgo on Linux")
	}
	syms := symbols()
	assert.Contains(t, syms, "cublasGemmEx")
	assert.Contains(t, syms, "cublasGemmStridedBatchedEx")
	assert.Contains(t, syms, "cublasSgemm_v2", "the table is the whole list")
	err := library.Installed("libcublas.so.11", "cublasGemmStridedBatchedEx")
	require.ErrorIs(t, err, ErrNoCUBLAS)
	assert.Equal(t, "blas: libcublas.so.11 does not export cublasGemmStridedBatchedEx; cuBLAS from CUDA 11 or newer is needed: cuBLAS not found", err.Error())
}

// TestTF32KnobDefaultsOff: GOCUDA_TF32 unset, off or not valid leaves
// TF32 off; on, true or 1 turn it on.
func TestTF32KnobDefaultsOff(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		want  bool
	}{
		{"", false, false},
		{"", true, false},
		{"off", true, false},
		{"on", true, true},
		{"true", true, true},
		{"1", true, true},
		{"ON", true, true},
		{"tf32", true, false},
	} {
		lookup := func(k string) (string, bool) {
			if k == config.EnvTF32 && tc.set {
				return tc.value, true
			}
			return "", false
		}
		assert.Equal(t, tc.want, tf32From(lookup), "%s=%q (set %v)", config.EnvTF32, tc.value, tc.set)
	}
}

// TestSetTF32OverridesAndReturnsThePrevious: SetTF32 returns what was in
// force and wins over the knob.
func TestSetTF32OverridesAndReturnsThePrevious(t *testing.T) {
	was := TF32()
	t.Cleanup(func() { SetTF32(was) })
	assert.Equal(t, was, SetTF32(true))
	assert.True(t, TF32())
	assert.True(t, SetTF32(false))
	assert.False(t, TF32())
	assert.False(t, SetTF32(false))
}
