// Package elemexpr is gocuda's one form of an elementwise expression for
// both backends: a CuPy-style body ("z = a * x + y"), parsed and typed once
// by C++'s rules, printed back as CUDA C for NVRTC (Body, Function) and
// evaluated on the host by typed vector loops (Eval), so that a kernel
// written once runs on a GPU and on the host backend without a Go form,
// and means the same on both.
//
//	e, err := elemexpr.Compile(
//		[]elemexpr.Param{{"a", elemexpr.Float32}, {"x", elemexpr.Float32}, {"y", elemexpr.Float32}},
//		[]elemexpr.Param{{"z", elemexpr.Float32}},
//		"z = a * x + y")
//	err = e.Eval(len(z), float32(2), x, y, z) // a scalar, two slices, the output
//	src := e.Function("__device__ __forceinline__", "_gc_elem") // for NVRTC
//
// # Grammar
//
// A body is a sequence of statements separated by ';' (the last may omit
// it), with // and /* */ comments:
//
//	stmt   = [ "const" ] type name [ "=" expr ] { "," name [ "=" expr ] }
//	       | name ( "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>=" ) expr
//	       | name "++" | name "--" | "++" name | "--" name
//	       | "if" "(" expr ")" branch [ "else" branch ]
//	branch = "{" { stmt ";" } "}" | stmt ";" | if-stmt
//	type   = float | double | int | long | long long | unsigned [ char | int | long [ long ] ]
//	       | bool | float32 | float64 | int32 | int64 | uint8 | uint32 | uint64
//	       | a type parameter (TypeParam) | auto
//	expr   = C's conditional expression: ?: over || && | ^ & == != < <= > >= << >> + - * / %,
//	         unary - + ! ~, casts (type)x, static_cast<type>(x) and type(x),
//	         parentheses, calls, names, true, false and C number literals
//	         (10, 10u, 10ll, 0x1f, 017, 0b101, 1.5, 1.5f, 2.f, .5, 1e-3, 0x1p-3)
//
// Names are the inputs (read only), the outputs, locals declared earlier,
// i (the element's flat index) and n (the element count), both long long.
// A local must be given a value before it is read; an output reads 0 until
// the body sets it, as gocuda's kernels hand it over; a local declared in
// a branch of an if ends with it, and one declared before is given a value
// by an if when both branches give it one. There are no loops, returns or
// other jumps. On the host an if computes both branches and each variable
// takes the value of the branch its condition picks (c ? a : b, && and ||
// likewise compute both sides): the same values as C's, since a body has
// no side effects and the host's integer division by zero gives 0 instead
// of trapping in the branch not taken.
//
// The functions are CUDA's math library as bodies call it: exp exp2 expm1
// log log2 log10 log1p sqrt rsqrt cbrt fabs floor ceil round trunc sin cos
// tan asin acos atan sinh cosh tanh asinh acosh atanh erf erfc (one
// argument), pow atan2 fmin fmax copysign fmod hypot fdim (two), fma
// (three), each also with the f suffix (expf, powf, ...); abs, min and
// max; isnan, isinf, isfinite and signbit. A misspelt name is answered
// with the nearest one.
//
// # Types
//
// The checker types a body as NVRTC compiles it as C++ for a 64-bit
// target: integral promotion (bool and unsigned char compute as int), the
// usual arithmetic conversions (int op long long is long long, int op
// unsigned is unsigned, float op double is double; the literal 1.5 is a
// double, so x * 1.5 is a double product even for a float x, and 1.5f is a
// float), comparisons, ! && || giving bool, shifts of the promoted left
// operand's type, c ? a : b of a and b's common type (or their type if
// they share it), conversion to the declared type on assignment and
// declaration. Calls resolve as C++ overloads do: the plain name (exp,
// sqrt, pow, fmin) is the float version when every argument is a float and
// the double one otherwise (an integer argument makes it double, as
// <cmath>'s integral overloads do); the f-suffixed name converts its
// arguments to float; abs keeps an integer's promoted type; min and max
// take the arguments' common type (fmin and fmax for floats).
//
// Body prints the typed body with every conversion as an explicit cast and
// every call by the overload chosen (sqrtf, or sqrt of a double), so NVRTC
// compiling it cannot choose differently; gocuda's code generator should
// compile that rather than the body as written.
//
// Where C leaves behaviour undefined, the host defines it, the same way
// gocuda's kernels do where they can:
//
//   - integer division and remainder by 0 give 0 (a GPU's value there is
//     unspecified), MinInt / -1 is MinInt, signed overflow wraps;
//   - float to integer conversion truncates toward zero and saturates at
//     the type's bounds, NaN giving 0, as the GPU's cvt.rzi instruction
//     does (for unsigned char the GPU's result out of 0..255 is unverified);
//   - shift counts are taken as unsigned: a count of at least the width
//     gives 0 for << and the sign for >>, as the GPU's shl and shr clamp;
//   - fmin and fmax ignore a NaN argument and order -0 below +0.
//
// # Evaluation
//
// Eval compiles the typed body, once for each combination of scalar and
// array inputs, into a list of operations over registers of chunk (512)
// elements, each operation one tight loop over typed slices ([]float32,
// []int64, ...) chosen by its types through generics; values that do not
// vary over the elements (scalars, literals) are computed once a chunk.
// Array inputs are read in place, and the last operation of an output
// writes into the output's slice where that is safe. Each Eval draws its
// buffers from a pool, so an Expr serves concurrent calls.
//
// Float arithmetic, sqrt and conversions are IEEE 754 and exact, as on a
// GPU. The other functions are Go's math in double precision (pow and
// atan2 corrected to C's), rounded to float for the float overloads:
// within the CUDA math library's ulp bounds of the GPU's result, not
// bit-identical. Two differences from a GPU remain: NVRTC contracts a*b+c
// into a fused multiply-add unless compiled with --fmad=false, and the host
// does not (the GPU result is the more accurate by up to half an ulp of
// a*b); and the GPU's transcendental functions are its own approximations.
// The differential test compiles each test body with the machine's C++
// compiler, as written and as printed, and compares Eval with it element
// by element on edge values: exactly for arithmetic, conversions and
// integers, within 2 ulp for the transcendental functions.
//
// A product followed by a sum (a * x + y) is fused into one pass, the
// product still rounded first. On one core Eval is about as fast as a
// hand-written Go loop for "z = a * x + y", "z = tanh(x) * 0.5f" and a
// sigmoid, and within 3x for a select (relu) or an integer division by a
// constant, which a Go loop compiles into shifts or fuses into one pass
// (the benchmarks time each body beside its loop: go test -bench .).
package elemexpr
