// Customkernel runs two kernels gocuda does not ship, on whatever backend
// gocuda picks, and checks them against plain Go:
//
//   - clamp_scale, a CUDA C kernel (rtc.NewKernel, compiled by NVRTC at the
//     first launch), y = min(max(x, lo), hi) * scale, with its Go form for
//     the host backend (rtc.HostFunc);
//   - softplus, an elementwise kernel gocuda writes from a C expression
//     (rtc.NewElementwiseKernel), y = log(1 + exp(beta*x)) / beta, with beta
//     one value per row broadcast across the row; the expression is all
//     there is to write, for both backends.
//
// On a GPU the CUDA code runs (NVRTC must be installed: the CUDA toolkit, or
// pip install nvidia-cuda-nvrtc); on the host backend clamp_scale's Go form
// runs and softplus's expression is evaluated in Go. Both are compared with
// a float64 computation in Go and printed.
//
//	go run ./examples/customkernel                         # the backend gocuda picks
//	GOCUDA_BACKEND=host go run ./examples/customkernel     # on the host backend
package main
