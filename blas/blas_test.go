package blas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/internal/testsupport/blasref"
)

// The tests run on the backend GOCUDA_BACKEND picks: the host backend
// (gonum) here, cuBLAS with GOCUDA_BACKEND=cuda.

func device(t testing.TB, ordinal int) backend.Device {
	t.Helper()
	b, err := auto.Default()
	require.NoError(t, err)
	if ordinal >= b.DeviceCount() {
		t.Skipf("needs device %d; the %s backend has %d", ordinal, b.Name(), b.DeviceCount())
	}
	dev, err := b.Device(ordinal)
	require.NoError(t, err)
	return dev
}

func stream(t testing.TB, dev backend.Device) backend.Stream {
	t.Helper()
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Destroy()) })
	return s
}

// upload copies data to new device memory, freed when the test ends.
func upload[T blas.Float](t testing.TB, dev backend.Device, s backend.Stream, data []T) backend.Ptr {
	t.Helper()
	var z T
	size := uint64(len(data)) * uint64(unsafe.Sizeof(z))
	p, err := dev.Alloc(max(size, 8))
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, s.Synchronize())
		assert.NoError(t, dev.Free(p))
	})
	if len(data) > 0 {
		require.NoError(t, dev.CopyHtoD(p, unsafe.Pointer(&data[0]), size, s))
	}
	return p
}

func download[T blas.Float](t testing.TB, dev backend.Device, s backend.Stream, p backend.Ptr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if n > 0 {
		var z T
		require.NoError(t, dev.CopyDtoH(unsafe.Pointer(&out[0]), p, uint64(n)*uint64(unsafe.Sizeof(z)), s))
	}
	return out
}

// stored is a rows × cols row-major matrix with rows ld apart; the padding
// between rows holds pad, so that a read of it shows in the result (NaN)
// or a write to it shows in the padding.
func stored[T blas.Float](rng *rand.Rand, rows, cols, ld int, pad T) []T {
	n := 0
	if rows > 0 {
		n = (rows-1)*ld + cols
	}
	out := make([]T, n)
	for i := range out {
		if i%ld < cols {
			out[i] = T(rng.IntN(9) - 4) // small integers: exact sums in float32
		} else {
			out[i] = pad
		}
	}
	return out
}

// refGemm and refGemv are the shared schoolbook reference (internal/testsupport/blasref).
func refGemm[T blas.Float](ta, tb bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) []T {
	return blasref.Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func refGemv[T blas.Float](trans bool, m, n int, alpha T, a []T, lda int, x []T, beta T, y []T) []T {
	return blasref.Gemv(trans, alpha, a, lda, x, beta, y)
}

func assertClose[T blas.Float](t *testing.T, want, got []T) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if math.IsNaN(w) || math.IsNaN(g) || math.Abs(w-g) > 1e-5*max(1, math.Abs(w)) {
			t.Fatalf("element %d: want %v, got %v (want %v, got %v)", i, w, g, want, got)
		}
	}
}

type gemmCase struct {
	name             string
	ta, tb           bool
	m, n, k          int
	alpha, beta      float64
	padA, padB, padC int // leading dimension minus stored columns
	nanC             bool
}

var gemmCases = []gemmCase{
	{name: "square", m: 4, n: 4, k: 4, alpha: 1},
	{name: "rectangular", m: 3, n: 5, k: 7, alpha: 1},
	{name: "transA", ta: true, m: 3, n: 5, k: 7, alpha: 1},
	{name: "transB", tb: true, m: 3, n: 5, k: 7, alpha: 1},
	{name: "transA transB", ta: true, tb: true, m: 6, n: 2, k: 9, alpha: 1},
	{name: "alpha beta", m: 5, n: 3, k: 4, alpha: -0.5, beta: 2},
	{name: "beta 1 accumulates", ta: true, m: 2, n: 9, k: 3, alpha: 2, beta: 1},
	{name: "padded leading dims", m: 5, n: 3, k: 4, alpha: 1, beta: 0.5, padA: 3, padB: 1, padC: 2},
	{name: "padded, both transposed", ta: true, tb: true, m: 5, n: 6, k: 2, alpha: 1.5, beta: -1, padA: 2, padB: 5, padC: 1},
	{name: "beta 0 ignores NaN in C", m: 3, n: 3, k: 3, alpha: 1, nanC: true},
	{name: "k 0 scales C by beta", m: 3, n: 4, k: 0, alpha: 1, beta: 3},
	{name: "k 0 beta 0 zeroes C", m: 2, n: 2, k: 0, alpha: 1, nanC: true},
	{name: "k 0 padded C", m: 3, n: 2, k: 0, alpha: 1, beta: -2, padC: 3},
	{name: "m 0", m: 0, n: 3, k: 2, alpha: 1},
	{name: "n 0", m: 3, n: 0, k: 2, alpha: 1},
	{name: "vector outer product", m: 7, n: 5, k: 1, alpha: 1},
	{name: "larger than a block", ta: true, m: 97, n: 131, k: 65, alpha: 1, beta: 1, padA: 3},
}

func TestGemmMatchesReference(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	for _, tc := range gemmCases {
		t.Run(tc.name+"/float32", func(t *testing.T) { runGemm[float32](t, dev, s, tc) })
		t.Run(tc.name+"/float64", func(t *testing.T) { runGemm[float64](t, dev, s, tc) })
	}
}

func runGemm[T blas.Float](t *testing.T, dev backend.Device, s backend.Stream, tc gemmCase) {
	rng := rand.New(rand.NewPCG(uint64(tc.m), uint64(tc.n*100+tc.k)))
	nan := T(math.NaN())
	ar, ac, br, bc := blasref.Shapes(tc.ta, tc.tb, tc.m, tc.n, tc.k)
	lda, ldb, ldc := max(1, ac)+tc.padA, max(1, bc)+tc.padB, max(1, tc.n)+tc.padC
	a := stored(rng, ar, ac, lda, nan) // NaN padding: reading it would show
	b := stored(rng, br, bc, ldb, nan)
	c := stored(rng, tc.m, tc.n, ldc, T(12345)) // the padding must survive
	if tc.nanC {
		for i := range c {
			if i%ldc < tc.n {
				c[i] = nan
			}
		}
	}
	pa, pb, pc := upload(t, dev, s, a), upload(t, dev, s, b), upload(t, dev, s, c)
	err := blas.Gemm(dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, T(tc.alpha), pa, lda, pb, ldb, T(tc.beta), pc, ldc)
	require.NoError(t, err)
	want := refGemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, T(tc.alpha), a, lda, b, ldb, T(tc.beta), c, ldc)
	if tc.nanC && tc.k == 0 {
		for i := range want {
			if i%ldc < tc.n {
				want[i] = 0
			}
		}
	}
	assertClose(t, want, download[T](t, dev, s, pc, len(c)))
}

func TestGemmSmallExact(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	// [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154]
	a := upload(t, dev, s, []float32{1, 2, 3, 4, 5, 6})
	b := upload(t, dev, s, []float32{7, 8, 9, 10, 11, 12})
	c := upload(t, dev, s, make([]float32, 4))
	require.NoError(t, blas.Gemm[float32](dev, s, false, false, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2))
	assert.Equal(t, []float32{58, 64, 139, 154}, download[float32](t, dev, s, c, 4))
	// Aᵀ·Aᵀ... rather (Bᵀ)ᵀ = B: Cᵀ = Bᵀ·Aᵀ read back as a 2 × 2.
	require.NoError(t, blas.Gemm[float32](dev, s, true, true, 2, 2, 3, 1, b, 2, a, 3, 0, c, 2))
	assert.Equal(t, []float32{58, 139, 64, 154}, download[float32](t, dev, s, c, 4))
}

type gemvCase struct {
	name        string
	trans       bool
	m, n        int
	alpha, beta float64
	pad         int
}

func TestGemvMatchesReference(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	cases := []gemvCase{
		{name: "plain", m: 3, n: 5, alpha: 1},
		{name: "transposed", trans: true, m: 3, n: 5, alpha: 1},
		{name: "alpha beta", m: 6, n: 4, alpha: 2, beta: -1},
		{name: "transposed alpha beta padded", trans: true, m: 6, n: 4, alpha: -0.5, beta: 0.25, pad: 3},
		{name: "padded", m: 4, n: 2, alpha: 1, beta: 1, pad: 5},
		{name: "empty x scales y", m: 4, n: 0, alpha: 1, beta: 2},
		{name: "empty x transposed", trans: true, m: 0, n: 3, alpha: 1, beta: -3},
		{name: "empty y", m: 0, n: 4, alpha: 1},
		{name: "tall", trans: true, m: 300, n: 7, alpha: 1, beta: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/float32", func(t *testing.T) { runGemv[float32](t, dev, s, tc) })
		t.Run(tc.name+"/float64", func(t *testing.T) { runGemv[float64](t, dev, s, tc) })
	}
}

func runGemv[T blas.Float](t *testing.T, dev backend.Device, s backend.Stream, tc gemvCase) {
	rng := rand.New(rand.NewPCG(uint64(tc.m), uint64(tc.n)))
	lda := max(1, tc.n) + tc.pad
	a := stored(rng, tc.m, tc.n, lda, T(math.NaN()))
	lenX, lenY := tc.n, tc.m
	if tc.trans {
		lenX, lenY = tc.m, tc.n
	}
	x := stored(rng, 1, lenX, max(1, lenX), T(0))
	y := stored(rng, 1, lenY, max(1, lenY), T(0))
	pa, px, py := upload(t, dev, s, a), upload(t, dev, s, x), upload(t, dev, s, y)
	require.NoError(t, blas.Gemv(dev, s, tc.trans, tc.m, tc.n, T(tc.alpha), pa, lda, px, T(tc.beta), py))
	want := refGemv(tc.trans, tc.m, tc.n, T(tc.alpha), a, lda, x, T(tc.beta), y)
	assertClose(t, want, download[T](t, dev, s, py, lenY))
}

func TestArgumentErrors(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	p := upload(t, dev, s, make([]float64, 64))
	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"negative m", func() error { return blas.Gemm[float64](dev, s, false, false, -1, 2, 2, 1, p, 2, p, 2, 0, p, 2) },
			[]string{"m = -1", "between 0 and"}},
		{"lda below columns", func() error { return blas.Gemm[float64](dev, s, false, false, 2, 2, 3, 1, p, 2, p, 2, 0, p, 2) },
			[]string{"lda = 2 for A", "stored as 2 × 3", "at least max(1, 3)"}},
		{"lda of transposed A", func() error { return blas.Gemm[float64](dev, s, true, false, 4, 2, 3, 1, p, 3, p, 2, 0, p, 2) },
			[]string{"lda = 3 for A", "stored as 3 × 4"}},
		{"ldc zero", func() error { return blas.Gemm[float64](dev, s, false, false, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0) },
			[]string{"ldc = 0 for C", "at least max(1, 0)"}},
		{"nil A", func() error { return blas.Gemm[float64](dev, s, false, false, 2, 2, 2, 1, 0, 2, p, 2, 0, p, 2) },
			[]string{"pointer A is nil"}},
		{"misaligned C", func() error { return blas.Gemm[float64](dev, s, false, false, 2, 2, 2, 1, p, 2, p, 2, 0, p+4, 2) },
			[]string{"pointer C", "not 8-byte aligned", "float64"}},
		{"gemv lda", func() error { return blas.Gemv[float32](dev, s, false, 3, 4, 1, p, 3, p, 0, p) },
			[]string{"Gemv float32", "lda = 3"}},
		{"gemv nil y", func() error { return blas.Gemv[float32](dev, s, true, 3, 4, 1, p, 4, p, 0, 0) },
			[]string{"pointer y is nil"}},
		{"nil stream", func() error { return blas.Gemv[float32](dev, nil, true, 3, 4, 1, p, 4, p, 0, p) },
			[]string{"nil device or stream"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestStreamOfAnotherDevice runs on two host devices, which every machine
// has: the check is the same code on both backends.
func TestStreamOfAnotherDevice(t *testing.T) {
	b := host.New(host.Options{Devices: 2})
	d0, _ := b.Device(0)
	d1, _ := b.Device(1)
	s1 := stream(t, d1)
	p := upload(t, d1, s1, make([]float32, 4))
	err := blas.Gemm[float32](d0, s1, false, false, 2, 2, 2, 1, p, 2, p, 2, 0, p, 2)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "not a stream of host device 0")
}

// otherDevice is a device of a backend blas does not know.
type otherDevice struct{ backend.Device }

func TestUnknownBackendIsNotSupported(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	err := blas.Gemv[float64](otherDevice{dev}, s, false, 1, 1, 1, 8, 1, 8, 0, 8)
	require.ErrorIs(t, err, backend.ErrNotSupported)
	assert.Contains(t, err.Error(), "blas_test.otherDevice")
}

// TestStreamOrdering queues Gemm behind slow work on one stream; the result
// read on the same stream must include it.
func TestStreamOrdering(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	const n = 64
	ones := make([]float32, n*n)
	for i := range ones {
		ones[i] = 1
	}
	a := upload(t, dev, s, ones)
	c := upload(t, dev, s, make([]float32, n*n))
	for range 5 { // C += A·A five times: 5n each, only if each saw the last
		require.NoError(t, blas.Gemm[float32](dev, s, false, false, n, n, n, 1, a, n, a, n, 1, c, n))
	}
	got := download[float32](t, dev, s, c, n*n)
	for i, v := range got {
		require.Equal(t, float32(5*n), v, "element %d", i)
	}
}

// TestConcurrentStreams has goroutines share the device's handle, each on
// its own stream: the handle's stream must be the caller's for every call.
func TestConcurrentStreams(t *testing.T) {
	dev := device(t, 0)
	const n, workers, rounds = 32, 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		s := stream(t, dev)
		a := upload(t, dev, s, filled[float64](n*n, float64(w+1)))
		c := upload(t, dev, s, make([]float64, n*n))
		wg.Go(func() {
			for range rounds {
				if err := blas.Gemm[float64](dev, s, false, true, n, n, n, 1, a, n, a, n, 1, c, n); err != nil {
					errs <- err
					return
				}
				runtime.Gosched()
			}
			got := make([]float64, n*n)
			if err := dev.CopyDtoH(unsafe.Pointer(&got[0]), c, uint64(n*n*8), s); err != nil {
				errs <- err
				return
			}
			want := float64(rounds * n * (w + 1) * (w + 1))
			for i, v := range got {
				if v != want {
					errs <- fmt.Errorf("worker %d element %d: want %v, got %v", w, i, want, v)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func filled[T blas.Float](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestHostStreamCheckerSeesGemm: on the host backend with the stream
// checker strict, a product reading memory another stream is still
// writing, with nothing ordering the two, is refused as a kernel would be;
// ordered through an event, it runs.
func TestHostStreamCheckerSeesGemm(t *testing.T) {
	var log strings.Builder
	b := host.New(host.Options{StreamCheck: host.StreamCheckStrict, StreamCheckLog: &log})
	dev, _ := b.Device(0)
	sa, sb := stream(t, dev), stream(t, dev)
	a := upload(t, dev, sa, make([]float32, 4))
	c := upload(t, dev, sb, make([]float32, 4))
	require.NoError(t, dev.Memset32(a, math.Float32bits(1), 4, sa))

	err := blas.Gemm[float32](dev, sb, false, false, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2)
	require.ErrorIs(t, err, host.ErrStreamRace)
	assert.Contains(t, err.Error(), "Gemm float32")

	ev, err := dev.NewEvent(false)
	require.NoError(t, err)
	defer ev.Destroy()
	require.NoError(t, ev.Record(sa))
	require.NoError(t, sb.WaitEvent(ev))
	require.NoError(t, blas.Gemm[float32](dev, sb, false, false, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2))
	assert.Equal(t, []float32{2, 2, 2, 2}, download[float32](t, dev, sb, c, 4))
}

// FuzzGemm drives Gemm with small, possibly wrong sizes and leading
// dimensions on device 0. Whatever the arguments, it must return an error
// or compute the reference product: on the host backend a bad argument
// that got past the checks would panic inside gonum on the stream's
// goroutine and take the process down.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(0), int8(3), int8(4), int8(5), int8(0), int8(0), int8(0))
	f.Add(uint8(3), int8(2), int8(0), int8(7), int8(1), int8(-1), int8(2))
	f.Add(uint8(1), int8(0), int8(3), int8(0), int8(-3), int8(0), int8(0))
	dev := device(f, 0)
	s := stream(f, dev)
	f.Fuzz(func(t *testing.T, flags uint8, m8, n8, k8, padA, padB, padC int8) {
		ta, tb := flags&1 != 0, flags&2 != 0
		m, n, k := int(m8)%9, int(n8)%9, int(k8)%9 // negative sizes stay negative
		ar, ac, br, bc := blasref.Shapes(ta, tb, m, n, k)
		lda, ldb, ldc := ac+int(padA)%4, bc+int(padB)%4, n+int(padC)%4
		rng := rand.New(rand.NewPCG(uint64(flags), uint64(m8)))
		mk := func(rows, cols, ld int) []float64 { // room for what a valid call reads
			if rows <= 0 || cols <= 0 || ld <= 0 {
				return make([]float64, 1)
			}
			return stored[float64](rng, rows, cols, max(ld, cols), 0)
		}
		a, b, c := mk(ar, ac, lda), mk(br, bc, ldb), mk(m, n, ldc)
		pa, pb, pc := upload(t, dev, s, a), upload(t, dev, s, b), upload(t, dev, s, c)
		err := blas.Gemm(dev, s, ta, tb, m, n, k, 1.5, pa, lda, pb, ldb, 0.5, pc, ldc)
		valid := m >= 0 && n >= 0 && k >= 0 && lda >= max(1, ac) && ldb >= max(1, bc) && ldc >= max(1, n)
		if !valid {
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			return
		}
		require.NoError(t, err)
		want := refGemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, c, ldc)
		assertClose(t, want, download[float64](t, dev, s, pc, len(c)))
	})
}
