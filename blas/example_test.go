package blas_test

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/half"
)

// C (2 × 2) = A (2 × 3) · B (3 × 2), row-major, on whichever backend
// GOCUDA_BACKEND picks: cuBLAS on a GPU, gonum on the host.
func ExampleGemm() {
	b, err := auto.Default()
	if err != nil {
		panic(err)
	}
	dev, _ := b.Device(0)
	s, _ := dev.NewStream()
	defer s.Destroy()

	a := []float32{1, 2, 3, 4, 5, 6}
	bm := []float32{7, 8, 9, 10, 11, 12}
	c := make([]float32, 4)
	pa, _ := dev.Alloc(4 * 6)
	pb, _ := dev.Alloc(4 * 6)
	pc, _ := dev.Alloc(4 * 4)
	defer dev.Free(pa)
	defer dev.Free(pb)
	defer dev.Free(pc)
	_ = dev.CopyHtoD(pa, unsafe.Pointer(&a[0]), 4*6, s)
	_ = dev.CopyHtoD(pb, unsafe.Pointer(&bm[0]), 4*6, s)

	err = blas.Gemm[float32](dev, s, false, false, 2, 2, 3,
		1, pa, 3, // alpha, A, A's leading dimension
		pb, 2, // B, B's leading dimension
		0, pc, 2) // beta, C, C's leading dimension
	if err != nil {
		panic(err)
	}
	_ = dev.CopyDtoH(unsafe.Pointer(&c[0]), pc, 4*4, s) // waits for the product
	fmt.Println(c)
	// Output: [58 64 139 154]
}

// C (2 × 2, float32) = A (2 × 3) · B (3 × 2) with bfloat16 inputs, summed
// in float32: on the tensor cores of a GPU, in float32 on the host.
func ExampleGemmEx() {
	b, err := auto.Default()
	if err != nil {
		panic(err)
	}
	dev, _ := b.Device(0)
	s, _ := dev.NewStream()
	defer s.Destroy()

	a := make([]half.BFloat16, 6)
	bm := make([]half.BFloat16, 6)
	half.BFloat16sFromFloat32s(a, []float32{1, 2, 3, 4, 5, 6})
	half.BFloat16sFromFloat32s(bm, []float32{0.5, 8, 9, 10, 11, 12})
	c := make([]float32, 4)
	pa, _ := dev.Alloc(2 * 6)
	pb, _ := dev.Alloc(2 * 6)
	pc, _ := dev.Alloc(4 * 4)
	defer dev.Free(pa)
	defer dev.Free(pb)
	defer dev.Free(pc)
	_ = dev.CopyHtoD(pa, unsafe.Pointer(&a[0]), 2*6, s)
	_ = dev.CopyHtoD(pb, unsafe.Pointer(&bm[0]), 2*6, s)

	err = blas.GemmEx[half.BFloat16, float32](dev, s, false, false, 2, 2, 3,
		1, pa, 3, pb, 2, 0, pc, 2)
	if err != nil {
		panic(err)
	}
	_ = dev.CopyDtoH(unsafe.Pointer(&c[0]), pc, 4*4, s)
	fmt.Println(c)
	// Output: [51.5 64 113 154]
}
