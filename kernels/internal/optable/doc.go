// Package optable is the one table of gocuda's generated elementwise
// operations, and the generator that turns it into code. Each entry (an
// Op in Ops) gives an operation's Go name, its kernel family, its shape
// (Kind), a doc phrase, its names in NumPy, PyTorch and Julia, and one body
// per group of element types as a CUDA C expression and a Go expression
// of x (and y; c for Where; lo and hi for Clamp). From it Generate writes:
//
//   - kernels/cuda/ops_gen.cuh: a functor and a kernel per (op, type),
//     gocuda_<Kernel>_<suffix>, and every conversion
//     gocuda_convert_<from>_<to>, through the drivers of
//     kernels/cuda/optable.cuh (included at the end of kernels.cu);
//   - kernels/ops_gen.go: the kernels-level function (kernels.Exp[T]),
//     the dispatch table genOps with each kernel's name, and a typed host
//     loop per (op, type), run split across cores by hostpar;
//   - cuarray/ops_gen.go: Ops[T] methods and package shorthands;
//   - kernels/cuda/emu/ops_gen_check.h: the emulator's checks of every
//     generated kernel against a plain loop;
//   - docs/operations.md: the list of operations.
//
// Adding an operation is one entry in table.go and `go generate ./kernels`;
// a test fails while the generated files differ from what the table gives.
// Helpers a body needs are written once by hand: C in
// kernels/cuda/optable.cuh, Go in kernels/optable.go.
//
// The bodies are strings of C and Go rather than one expression language
// (internal/elemexpr could print both) so that each side says exactly what
// runs: float32 math as expf on a GPU and as math.Exp rounded on the host,
// saturating conversions written out, and host loops that are plain typed
// Go loops, as fast as hand-written ones. The checks are the tests of
// every op against package math on the host and the emulator run of every
// kernel.
//
// For example, the entry
//
//	floatMath("Erf", "erf", "erf", "Erf", "the error function erf(x)", "...")
//
// makes gocuda_erf_f32 (erff(x)), gocuda_erf_f64 (erf(x)), kernels.Erf,
// cuarray.Erf and Ops.Erf.
package optable
