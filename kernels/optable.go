package kernels

//go:generate go run ./internal/optable/gen

import (
	"math"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
)

// The runtime of the generated operations (ops_gen.go, from the table in
// internal/optable): their dispatch, the adapters from typed host loops to
// device pointers, and the Go helpers their bodies call.

// genKind is a generated operation's shape (optable.Kind).
type genKind uint8

const (
	genUnary   genKind = iota // dst T = f(x T)
	genBinary                 // dst T = f(a T, b T)
	genCompare                // dst bool = f(a T, b T)
	genWhere                  // dst T = cond ? a : b
	genClamp                  // dst T = f(x T) with scalars lo, hi
)

// hostFn runs one generated operation on the host backend: dst and the
// inputs are host-backend addresses of n elements; s1 and s2 are scalar
// bits (Clamp's bounds), or, for two and three inputs, s1 is the Scalars
// set of inputs that are one element each.
type hostFn func(dst backend.Ptr, in [3]backend.Ptr, n int, s1, s2 uint64)

// genOp is one generated operation.
type genOp struct {
	name   string
	kind   genKind
	types  dtypeSet
	kernel [numDTypes]int // by input DType, an index of genKernelNames
	host   [numDTypes]hostFn
}

// genConversion is one conversion's kernel and host loop.
type genConversion struct {
	kernel int
	host   hostFn
}

// genKernelID is the kernel ID (see kernelID) of generated kernel i: they
// follow the families' kernels and the spin kernel.
func genKernelID(i int) int { return genBase + i }

// operands is the pointer arguments of a generated operation of kind k on
// dt, and each one's element type: dst first.
func operands(k genKind, dt DType, dst backend.Ptr, in [3]backend.Ptr) ([4]ptrArg, [4]DType, int) {
	switch k {
	case genBinary:
		return [4]ptrArg{{"dst", dst}, {"a", in[0]}, {"b", in[1]}}, [4]DType{dt, dt, dt}, 3
	case genCompare:
		return [4]ptrArg{{"dst", dst}, {"a", in[0]}, {"b", in[1]}}, [4]DType{Bool, dt, dt}, 3
	case genWhere:
		return [4]ptrArg{{"dst", dst}, {"cond", in[0]}, {"a", in[1]}, {"b", in[2]}}, [4]DType{dt, Bool, dt, dt}, 4
	}
	return [4]ptrArg{{"dst", dst}, {"x", in[0]}}, [4]DType{dt, dt}, 2
}

// runGen checks and queues generated operation g on dt.
func runGen(g *genOp, dt DType, dev backend.Device, s backend.Stream, dst backend.Ptr, in [3]backend.Ptr, n int, s1, s2 uint64) error {
	return runGenScalars(g, dt, dev, s, dst, in, n, s1, s2, 0)
}

// takesScalars reports whether the kernels of kind k take the Scalars
// argument (optable.cuh's emap2 and emap3).
func takesScalars(k genKind) bool { return k == genBinary || k == genCompare || k == genWhere }

// runGenScalars is runGen with the inputs in sc single elements (one
// element of memory each, read for all n): the kernels' last argument;
// for the host loops it travels as s1, which these kinds do not use.
func runGenScalars(g *genOp, dt DType, dev backend.Device, s backend.Stream, dst backend.Ptr, in [3]backend.Ptr, n int, s1, s2 uint64, sc Scalars) error {
	if g.kind == genUnary { // Tanh, Exp, …: one type, two pointers
		if q, f := quickFn(dev, s, g.types, dt, n, genKernelID(g.kernel[dt]), dst, in[0]); f != nil {
			return q.launch(g.name, dt, f, elementwiseGrid(n, dt, q.sms), wp(dst), wp(in[0]), uint64(n))
		}
	}
	t, err := prepare(g.name, g.types, dt, dev, s, n)
	if err != nil || n == 0 {
		return err
	}
	ptrs, dts, np := operands(g.kind, dt, dst, in)
	widest := dt
	for i := range np {
		count := n
		if i > 0 && sc&(1<<(i-1)) != 0 {
			count = 1
		}
		if err := t.checkTyped(ptrs[i], dts[i], count); err != nil {
			return err
		}
		if dts[i].Size() > widest.Size() {
			widest = dts[i]
		}
	}
	if takesScalars(g.kind) {
		s1 = uint64(sc)
	}
	if t.cu != nil {
		var w [7]uint64 // up to four pointers, Clamp's two bounds, n, the scalars' bits
		nw := 0
		for i := range np {
			w[nw] = wp(ptrs[i].p)
			nw++
		}
		if g.kind == genClamp {
			w[nw], w[nw+1] = s1, s2
			nw += 2
		}
		w[nw] = uint64(n)
		nw++
		if takesScalars(g.kind) {
			w[nw] = cuda.Word32(uint32(sc))
			nw++
		}
		return t.launchIDW(genKernelID(g.kernel[dt]), elementwiseGrid(n, widest, t.sms), threads, w[:nw]...)
	}
	h := g.host[dt]
	return t.enqueue(func() { h(dst, in, n, s1, s2) })
}

// Scalars is a set of the inputs of a generated operation of two or three
// inputs that are single elements: bit i (1<<i) for input i, in the order
// the operation's function takes them (a, b; for Where cond, a, b).
type Scalars uint8

// WithScalars runs the generated operation named op (one of two inputs,
// such as "Pow", "Less" or "LogicalAnd", or "Where") on T, as the function
// of that name does, except that each input in sc points to a single
// element, which stands for every one of the n elements: NumPy's
// broadcasting of a one-element array, without writing it out n times.
// The element is read on the GPU, in stream order (no synchronisation; a
// captured graph reads it when it runs). in holds the inputs in the
// function's order. dst may be a full input exactly (in place), but must
// not overlap a single-element one (unless n is 1).
//
// An op that is not such an operation, a wrong number of inputs or bits
// of inputs it lacks are errors wrapping backend.ErrInvalidValue.
func WithScalars[T Elem](op string, dev backend.Device, s backend.Stream, dst backend.Ptr, in []backend.Ptr, sc Scalars, n int) error {
	g := genByName(op)
	if g == nil || !takesScalars(g.kind) {
		return opErrorf("WithScalars", DTypeOf[T](), "operation %q is not a generated operation of two or three inputs (Pow, Minimum, Maximum, the comparisons, the logical ones, Where): %w",
			op, backend.ErrInvalidValue)
	}
	want := 2
	if g.kind == genWhere {
		want = 3
	}
	if len(in) != want || sc>>want != 0 {
		return opErrorf("WithScalars", DTypeOf[T](), "%s takes %d inputs and scalar bits 0 to %d; got %d inputs and scalars %#b: %w",
			op, want, want-1, len(in), sc, backend.ErrInvalidValue)
	}
	var p [3]backend.Ptr
	copy(p[:], in)
	return runGenScalars(g, DTypeOf[T](), dev, s, dst, p, n, 0, 0, sc)
}

// genByName is the generated operation named name, or nil.
func genByName(name string) *genOp {
	for i := range genOps {
		if genOps[i].name == name {
			return &genOps[i]
		}
	}
	return nil
}

// Convert sets dst[0:n] = U(x[0:n]), for every pair of element types:
// numbers convert as in Go (integers wrap, integer → float rounds to
// nearest even), except float → integer, which truncates toward zero and
// saturates as CUDA's cvt.rzi.sat does (NaN → 0, below the range → the
// type's minimum, above → its maximum; Go leaves those undefined); any
// type → bool is x != 0 (NaN → true); bool → a number is 0 or 1; a real →
// complex64 has imaginary part 0; complex64 → a real type converts the
// real part as float32 does. docs/operations.md has the table.
func Convert[U, T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, n int) error {
	from, to := DTypeOf[T](), DTypeOf[U]()
	t, err := prepare("Convert", everyType, from, dev, s, n)
	if err != nil || n == 0 {
		return err
	}
	if err := t.checkTyped(ptrArg{"dst", dst}, to, n); err != nil {
		return err
	}
	if err := t.checkTyped(ptrArg{"x", x}, from, n); err != nil {
		return err
	}
	c := genConvert[from][to]
	if t.cu != nil {
		return t.launchIDW(genKernelID(c.kernel), convertGrid(n, from, to, t.sms), threads, wp(dst), wp(x), uint64(n))
	}
	return t.enqueue(func() { c.host(dst, [3]backend.Ptr{x}, n, 0, 0) })
}

// checkTyped is checkPtr for an argument of n elements of dt, which may
// differ from the operation's (a comparison's bool dst, Where's cond).
func (t *target) checkTyped(a ptrArg, dt DType, n int) error {
	size := dt.Size()
	t.declare(a.name, a.p, uint64(n)*uint64(size))
	if a.p == 0 {
		return t.errorf("pointer %s is nil: %w", a.name, backend.ErrInvalidValue)
	}
	if uintptr(a.p)%uintptr(size) != 0 {
		return t.errorf("pointer %s = %#x is not %d-byte aligned, as %s elements must be: %w",
			a.name, uintptr(a.p), size, dt, backend.ErrInvalidValue)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Adapters: a typed loop over slices as a hostFn, split across cores.

func unaryHost[O, I any](f func(d []O, x []I)) hostFn {
	return func(dst backend.Ptr, in [3]backend.Ptr, n int, _, _ uint64) {
		d, x := hostView[O](dst, n), hostView[I](in[0], n)
		parallel(n, func(lo, hi int) { f(d[lo:hi], x[lo:hi]) })
	}
}

func binaryHost[O, I any](f func(d []O, x, y []I)) hostFn {
	return func(dst backend.Ptr, in [3]backend.Ptr, n int, sc, _ uint64) {
		d := hostView[O](dst, n)
		x, y := hostIn[I](in[0], n, sc&1 != 0), hostIn[I](in[1], n, sc&2 != 0)
		parallel(n, func(lo, hi int) {
			pieces(lo, hi, sc != 0, func(lo, hi int) { f(d[lo:hi], x.at(lo, hi), y.at(lo, hi)) })
		})
	}
}

func whereHost[T any](f func(d []T, c []bool, x, y []T)) hostFn {
	return func(dst backend.Ptr, in [3]backend.Ptr, n int, sc, _ uint64) {
		d := hostView[T](dst, n)
		c, x, y := hostIn[bool](in[0], n, sc&1 != 0), hostIn[T](in[1], n, sc&2 != 0), hostIn[T](in[2], n, sc&4 != 0)
		parallel(n, func(lo, hi int) {
			pieces(lo, hi, sc != 0, func(lo, hi int) { f(d[lo:hi], c.at(lo, hi), x.at(lo, hi), y.at(lo, hi)) })
		})
	}
}

// hostRepeat is how many copies of a single-element input the host loops
// read at a time: the typed loops take slices, so a scalar becomes a
// slice of this many copies of itself, and the loop runs in pieces of at
// most this length.
const hostRepeat = 2048

// hostInput is an input of a host loop: n elements, or, for a single
// element (rep), a slice of copies of it.
type hostInput[T any] struct {
	s   []T
	rep bool
}

// hostIn is the input at p: n elements, or one read once when scalar.
func hostIn[T any](p backend.Ptr, n int, scalar bool) hostInput[T] {
	if !scalar {
		return hostInput[T]{s: hostView[T](p, n)}
	}
	v := hostView[T](p, 1)[0]
	r := make([]T, min(n, hostRepeat))
	for i := range r {
		r[i] = v
	}
	return hostInput[T]{s: r, rep: true}
}

// at is the input's elements lo to hi (hi - lo ≤ hostRepeat for a
// scalar).
func (h hostInput[T]) at(lo, hi int) []T {
	if h.rep {
		return h.s[:hi-lo]
	}
	return h.s[lo:hi]
}

// pieces calls f on [lo, hi): at once, or, when some input is a scalar
// (split), in pieces of at most hostRepeat elements.
func pieces(lo, hi int, split bool, f func(lo, hi int)) {
	if !split {
		f(lo, hi)
		return
	}
	for ; lo < hi; lo += hostRepeat {
		f(lo, min(hi, lo+hostRepeat))
	}
}

func clampHost[T Elem](f func(d, x []T, lo, hi T)) hostFn {
	return func(dst backend.Ptr, in [3]backend.Ptr, n int, s1, s2 uint64) {
		d, x, lo, hi := hostView[T](dst, n), hostView[T](in[0], n), fromBitsHost[T](s1), fromBitsHost[T](s2)
		parallel(n, func(l, h int) { f(d[l:h], x[l:h], lo, hi) })
	}
}

// ---------------------------------------------------------------------------
// Helpers of the Go bodies; kernels/cuda/optable.cuh has their C twins.

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// absInt is |x|, wrapping for the most negative value as -x does.
func absInt[T int8 | int16 | int32 | int64](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// signOf is NumPy's sign: -1, 0 or 1, NaN for NaN, 0 for ±0.
func signOf[T float32 | float64 | int8 | int16 | int32 | int64](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	case x == 0:
		return 0
	}
	return x // NaN
}

func reluOf[T float](x T) T {
	if x > 0 {
		return x
	}
	return 0
}

// minimumOf and maximumOf are np.minimum and np.maximum: NaN if either is
// (a's NaN when both are), a when a and b compare equal (so -0 and +0 give
// a).
func minimumOf[T realNumber](a, b T) T {
	if a <= b || a != a {
		return a
	}
	return b
}

func maximumOf[T realNumber](a, b T) T {
	if a >= b || a != a {
		return a
	}
	return b
}

func selectOf[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// Saturating float → integer conversions (CUDA's cvt.rzi.sat): NaN → 0,
// truncation toward zero within the range, the nearest bound outside it.
func satI32(x float64) int32 { return satTo[int32](x, math.MinInt32, math.MaxInt32) }

func satI64(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x <= math.MinInt64:
		return math.MinInt64
	case x >= 0x1p63: // MaxInt64 rounds up to 2^63 as a float64
		return math.MaxInt64
	}
	return int64(x)
}

func satU8(x float64) uint8   { return satTo[uint8](x, 0, math.MaxUint8) }
func satI8(x float64) int8    { return satTo[int8](x, math.MinInt8, math.MaxInt8) }
func satI16(x float64) int16  { return satTo[int16](x, math.MinInt16, math.MaxInt16) }
func satU32(x float64) uint32 { return satTo[uint32](x, 0, math.MaxUint32) }

// satTo is the saturating conversion to an integer type whose bounds lo
// and hi a float64 holds exactly (every one but int64, whose MaxInt64
// rounds to 2^63): NaN → 0, lo or hi outside them, truncation inside.
func satTo[T int8 | int16 | int32 | uint8 | uint32](x float64, lo, hi T) T {
	switch {
	case x != x:
		return 0
	case x <= float64(lo):
		return lo
	case x >= float64(hi):
		return hi
	}
	return T(x)
}

// logSubnormal is math.Log, right for subnormals too: go1.26's amd64
// math.Log reads a subnormal's exponent as the smallest normal's
// (math.Log(5e-324) is -709.09, not -744.44, the GPU's and C's answer), so
// a subnormal is scaled into the normal range first.
func logSubnormal(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}
