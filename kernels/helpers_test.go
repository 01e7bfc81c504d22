package kernels_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/kernels"
)

// The tests run on the backend auto.Default picks: the host backend here,
// the GPU with GOCUDA_BACKEND=cuda. Every result is checked against a
// reference computed in the test with Go's own arithmetic (or float64),
// on fresh random inputs, into outputs poisoned first, so that an element
// left unwritten or a write past the end fails.

// testSizes cover a single element, a tail shorter than a vector, a few
// vectors with a tail, and many blocks with a tail (1<<20 + 7 elements;
// 1<<16 + 7 with -short, which CI's race run uses).
func testSizes() []int {
	if testing.Short() {
		return []int{1, 3, 1000, 1<<16 + 7}
	}
	return []int{1, 3, 1000, 1<<20 + 7}
}

// layouts place the buffers: all at the 256-byte-aligned start of their
// allocation (the vector path), the inputs one element in (so only the
// scalar path is correct), or every buffer one element in.
var layouts = []struct {
	name          string
	inOff, outOff bool
}{
	{"aligned", false, false},
	{"offset-inputs", true, false},
	{"offset-all", true, true},
}

// layoutsFor is every layout for small arrays, and for large ones the two
// that take different paths through the kernels.
func layoutsFor(n int) []struct {
	name          string
	inOff, outOff bool
} {
	if n > 1<<16 {
		return layouts[:2]
	}
	return layouts
}

const (
	poison = 0xA5
	guard  = 17 // elements after n that must keep the poison
)

type env struct {
	dev backend.Device
	s   backend.Stream
	r   *rand.Rand
}

func newEnv(t testing.TB) *env {
	b, err := auto.Default()
	require.NoError(t, err)
	dev, err := b.Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Destroy()) })
	seed := uint64(time.Now().UnixNano())
	if _, bench := t.(*testing.B); !bench {
		t.Logf("backend %s, device %q, seed %d", b.Name(), dev.Info().Name, seed)
	}
	return &env{dev: dev, s: s, r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

func sizeOf[T kernels.Elem]() int { return kernels.DTypeOf[T]().Size() }

// buf is n elements of T on the device, at the start of an allocation or one
// element in, followed by guard poisoned elements.
type buf[T kernels.Elem] struct {
	e *env
	p backend.Ptr
	n int
}

func alloc[T kernels.Elem](t testing.TB, e *env, n int, offset bool) *buf[T] {
	t.Helper()
	size := sizeOf[T]()
	bytes := uint64((n+guard+1)*size + 16)
	base, err := e.dev.Alloc(bytes)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, e.s.Synchronize())
		assert.NoError(t, e.dev.Free(base))
	})
	require.Zero(t, base%256, "allocations should be 256-byte aligned")
	require.NoError(t, e.dev.Memset8(base, poison, bytes, e.s))
	p := base
	if offset {
		p += backend.Ptr(size)
	}
	return &buf[T]{e: e, p: p, n: n}
}

func upload[T kernels.Elem](t testing.TB, e *env, vals []T, offset bool) *buf[T] {
	t.Helper()
	b := alloc[T](t, e, len(vals), offset)
	if len(vals) > 0 {
		require.NoError(t, e.dev.CopyHtoD(b.p, unsafe.Pointer(&vals[0]), uint64(len(vals)*sizeOf[T]()), e.s))
	}
	return b
}

// read returns the n elements, after checking that the guard after them
// still holds the poison.
func (b *buf[T]) read(t testing.TB) []T {
	t.Helper()
	all := make([]T, b.n+guard)
	size := sizeOf[T]()
	require.NoError(t, b.e.dev.CopyDtoH(unsafe.Pointer(&all[0]), b.p, uint64(len(all)*size), b.e.s))
	tail := unsafe.Slice((*byte)(unsafe.Pointer(&all[b.n])), guard*size)
	for i, v := range tail {
		if v != poison {
			t.Fatalf("byte %d after the %d elements was written: %#x, want the poison %#x", i, b.n, v, poison)
		}
	}
	return all[:b.n]
}

// ---------------------------------------------------------------------------
// Random inputs.

type genKind int

const (
	general  genKind = iota
	positive         // > 0: Log, Sqrt
	divisor          // integers with 0 and -1 often; floats as general
	small            // floats in [-1, 1): sums and dots
)

func gen[T kernels.Elem](r *rand.Rand, n int, kind genKind) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = genOne[T](r, kind)
	}
	return out
}

func genOne[T kernels.Elem](r *rand.Rand, kind genKind) T {
	var z T
	var v any
	f := func() float64 {
		switch kind {
		case positive:
			return math.Exp(r.Float64()*12 - 6) // 0.0025 to 400
		case small:
			return r.Float64()*2 - 1
		}
		return r.Float64()*16 - 8
	}
	switch any(z).(type) {
	case float32:
		v = float32(f())
	case float64:
		v = f()
	case complex64:
		v = complex(float32(f()), float32(f()))
	case int32:
		switch {
		case kind == divisor:
			v = int32(r.IntN(17) - 8)
		case r.IntN(8) == 0:
			v = []int32{math.MinInt32, math.MaxInt32, -1, 0}[r.IntN(4)]
		default:
			v = int32(r.Uint32())
		}
	case int64:
		switch {
		case kind == divisor:
			v = int64(r.IntN(17) - 8)
		case r.IntN(8) == 0:
			v = []int64{math.MinInt64, math.MaxInt64, -1, 0}[r.IntN(4)]
		default:
			v = int64(r.Uint64())
		}
	case bool:
		v = r.IntN(2) == 1
	case uint8:
		if kind == divisor {
			v = uint8(r.IntN(8))
		} else {
			v = uint8(r.Uint32())
		}
	case int8:
		switch {
		case kind == divisor:
			v = int8(r.IntN(17) - 8)
		case r.IntN(8) == 0:
			v = []int8{math.MinInt8, math.MaxInt8, -1, 0}[r.IntN(4)]
		default:
			v = int8(r.Uint32())
		}
	case int16:
		switch {
		case kind == divisor:
			v = int16(r.IntN(17) - 8)
		case r.IntN(8) == 0:
			v = []int16{math.MinInt16, math.MaxInt16, -1, 0}[r.IntN(4)]
		default:
			v = int16(r.Uint32())
		}
	case uint32:
		switch {
		case kind == divisor:
			v = uint32(r.IntN(8))
		case r.IntN(8) == 0:
			v = []uint32{math.MaxUint32, 1, 0}[r.IntN(3)]
		default:
			v = r.Uint32()
		}
	}
	return v.(T)
}

// ---------------------------------------------------------------------------
// Comparison.

func isInteger[T kernels.Elem]() bool {
	switch kernels.DTypeOf[T]() {
	case kernels.Int32, kernels.Int64, kernels.Uint8, kernels.Int8, kernels.Int16, kernels.Uint32:
		return true
	}
	return false
}

// mag is |v| as a float64 (the modulus of a complex).
func mag[T kernels.Elem](v T) float64 {
	switch x := any(v).(type) {
	case float32:
		return math.Abs(float64(x))
	case float64:
		return math.Abs(x)
	case complex64:
		return cmplx.Abs(complex128(x))
	case int32:
		return math.Abs(float64(x))
	case int64:
		return math.Abs(float64(x))
	case uint8:
		return float64(x)
	case int8:
		return math.Abs(float64(x))
	case int16:
		return math.Abs(float64(x))
	case uint32:
		return float64(x)
	}
	return 0
}

func sameFloat(got, want, scale, rtol float64) bool {
	switch {
	case math.IsNaN(got) || math.IsNaN(want):
		return math.IsNaN(got) && math.IsNaN(want)
	case got == want:
		return true
	case math.IsInf(got, 0) || math.IsInf(want, 0):
		return false
	}
	return math.Abs(got-want) <= rtol*math.Max(math.Abs(want), scale)
}

// sameFloatOf is sameFloat for a value of a type whose smallest normal is
// minNormal: below it the ulp stops shrinking, so rtol, a bound in ulps,
// becomes an absolute one there. A subnormal result (Pow of a small base
// to a large power) may then differ by a few of the subnormal ulps that
// rtol allows a normal result, as the H100's pow and Go's math.Pow do.
func sameFloatOf(got, want, scale, rtol, minNormal float64) bool {
	return sameFloat(got, want, math.Max(scale, minNormal), rtol)
}

// The smallest normal float32 and float64.
const (
	minNormal32 = 0x1p-126
	minNormal64 = 0x1p-1022
)

// near reports whether got is want within rtol of max(|want|, scale);
// rtol 0 asks for the same value (NaN matching NaN). Integers are always
// compared exactly.
func near[T kernels.Elem](got, want T, scale, rtol float64) bool {
	switch g := any(got).(type) {
	case float32:
		return sameFloatOf(float64(g), float64(any(want).(float32)), scale, rtol, minNormal32)
	case float64:
		return sameFloatOf(g, any(want).(float64), scale, rtol, minNormal64)
	case complex64:
		w := any(want).(complex64)
		return sameFloatOf(float64(real(g)), float64(real(w)), scale, rtol, minNormal32) &&
			sameFloatOf(float64(imag(g)), float64(imag(w)), scale, rtol, minNormal32)
	}
	return got == want
}

// checkAll compares got with want(i) for every element and reports the
// first few mismatches.
func checkAll[T kernels.Elem](t testing.TB, got []T, rtol float64, want func(i int) (T, float64)) {
	t.Helper()
	var bad []string
	count := 0
	for i, g := range got {
		w, scale := want(i)
		if near(g, w, scale, rtol) {
			continue
		}
		count++
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("  [%d] got %v, want %v (scale %g)", i, g, w, scale))
		}
	}
	if count > 0 {
		t.Fatalf("%d of %d elements wrong (rtol %g):\n%s", count, len(got), rtol, strings.Join(bad, "\n"))
	}
}

// rtolFor picks a tolerance by element type: r32 for float32 and complex64,
// r64 for float64, 0 (exact) for integers.
func rtolFor[T kernels.Elem](r32, r64 float64) float64 {
	switch kernels.DTypeOf[T]() {
	case kernels.Float32, kernels.Complex64:
		return r32
	case kernels.Float64:
		return r64
	}
	return 0
}

// typed runs one instantiation of a generic test per element type.
type typed struct {
	name string
	run  func(t *testing.T)
}

func runTyped(t *testing.T, cases []typed) {
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// number is kernels.Elem less bool: the types with arithmetic.
type number interface {
	float32 | float64 | int32 | int64 | uint8 | complex64 | int8 | int16 | uint32
}
