package rtc_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/rtc"
)

// A kernel of your own: CUDA C++ source that NVRTC compiles on a GPU, and
// the same in Go, which the host backend runs.
func ExampleNewKernel() {
	const src = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		y[i] = a * x[i] + y[i];
}`
	saxpy, err := rtc.NewKernel("saxpy", src, rtc.HostFunc(func(a float32, x, y []float32, n int64) {
		for i := range n {
			y[i] = a*x[i] + y[i]
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4}))
	y := cuarray.Must(cuarray.Ones[float32](4))
	// Arrays say whether the kernel reads (In) or writes them (Out, InOut);
	// the arguments follow the kernel's parameters.
	if err := saxpy.Launch(nil, rtc.Linear(4), float32(2), cuarray.In(x), cuarray.InOut(y), int64(4)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(y.ToSlice())

	// A bare array is refused: the launch must know how it is used.
	err = saxpy.Launch(nil, rtc.Linear(4), float32(2), x, cuarray.InOut(y), int64(4))
	fmt.Println(err)
	// Output:
	// [3 5 7 9] <nil>
	// rtc: kernel saxpy: argument 1 is a bare *cuarray.Array[float32]; wrap it in cuarray.In, Out or InOut to say whether the kernel reads it, writes it or both: invalid value
}

// A kernel gocuda writes from an expression, which runs on a GPU and, with
// no Go form to write, on the host backend: inputs broadcast (a scalar,
// a row), and Apply makes the output.
func ExampleNewElementwiseKernel() {
	axpy, err := rtc.NewElementwiseKernel("axpy",
		"float32 a, float32 x, float32 y", "float32 z", "z = a * x + y")
	if err != nil {
		log.Fatal(err)
	}
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	row := cuarray.Must(cuarray.FromSlice([]float32{10, 20, 30}))
	z, err := rtc.Apply[float32](axpy, nil, 2, x, row)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(z.ToSlice())
	fmt.Println(axpy)
	// Output:
	// [12 24 36 18 30 42] <nil>
	// elementwise kernel axpy(float32 a, float32 x, float32 y) -> (float32 z)
}
