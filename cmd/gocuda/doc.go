// Command gocuda inspects and exercises gocuda on this machine.
//
//	gocuda doctor            driver, devices, features, backend and knobs
//	gocuda status            PoolStatus, after an optional warm-up
//	gocuda replay TRACE...   run recorded allocation traces through the pools
//	gocuda bench             time allocate+free pairs through each pool
//	gocuda bench peer        time copies between two devices (peer, staged)
//	gocuda bench allreduce   time NCCL all-reduces across the GPUs
//	gocuda bench fft         time package cufft's transforms
//	gocuda bench gemm        time matrix products: bfloat16, float16, TF32, float32, batched
//	gocuda launch -n N -- P  run N ranks of program P, with their rendezvous
//	gocuda version           gocuda, Go, the driver and the CUDA libraries found
//
// Run "gocuda COMMAND --help" (or "gocuda help COMMAND") for a command's
// flags; help goes to stdout and exits 0. A mistake in the command line
// exits 2 with one line naming the nearest command, flag or pool and the
// help to run. Sizes are read as the GOCUDA_ limit knobs read them
// (config.ParseSize): "1.5" is refused, not read as 1 byte. bench and
// replay show progress on stderr when it is a terminal and the run takes
// over a second (--quiet for none); bench gives each cell's mean and the
// p50, p99 and p99.9 of single pairs.
package main
