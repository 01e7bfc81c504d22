package cuarray_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/pool"
)

// backendName is what headers say in parentheses on the backend the tests
// run on.
func backendName(t testing.TB) string {
	t.Helper()
	b, err := gocuda.Backend()
	require.NoError(t, err)
	return b.Name()
}

// arrayOf uploads data into an array of shape; nil shape makes a
// zero-dimensional array of data[0].
func arrayOf[T cuarray.Elem](t testing.TB, data []T, shape ...int) *cuarray.Array[T] {
	t.Helper()
	if shape == nil {
		a, err := cuarray.FromSlice(data[:1], 1)
		require.NoError(t, err)
		a, err = a.Reshape()
		require.NoError(t, err)
		return a
	}
	a, err := cuarray.FromSlice(data, shape...)
	require.NoError(t, err)
	return a
}

func TestFormatPrintsValues(t *testing.T) {
	dev := "on device 0 (" + backendName(t) + ")"
	cases := []struct {
		name, format string
		arr          fmt.Formatter
		want         string
	}{
		{"0-d", "%v", arrayOf(t, []float32{3.5}), "0-dimensional float32 " + dev + ":\n3.5"},
		{"0-d with precision", "%.2f", arrayOf(t, []float64{3.5}), "3.50"},
		{"1-d", "%v", arrayOf(t, []int32{1, -20, 3}, 3), "3-element int32 " + dev + ":\n[  1 -20   3]"},
		{"2-d", "%v", arrayOf(t, []float32{1, 2, 3, 4, 5, 6}, 2, 3), "2×3 float32 " + dev + ":\n[[1 2 3]\n [4 5 6]]"},
		{"2-d %.3f", "%.3f", arrayOf(t, []float32{1, 2.5, 3, 4, 5, 6}, 2, 3), "[[1.000 2.500 3.000]\n [4.000 5.000 6.000]]"},
		{"2-d %g", "%g", arrayOf(t, []float64{0.5, 1e10}, 1, 2), "[[  0.5 1e+10]]"},
		{"2-d %6.2f width per element", "%6.2f", arrayOf(t, []float64{1, 2}, 2, 1), "[[  1.00]\n [  2.00]]"},
		{"3-d", "%v", arrayOf(t, []int64{0, 1, 2, 3, 4, 5, 6, 7}, 2, 2, 2),
			"2×2×2 int64 " + dev + ":\n[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"},
		{"empty 1-d", "%v", cuarray.Must(cuarray.New[float32](0)), "0-element float32 " + dev + ":\n[]"},
		{"empty 2-d", "%g", cuarray.Must(cuarray.New[float32](0, 3)), "[]"},
		{"uint8 %d", "%d", arrayOf(t, []uint8{1, 10, 255}, 3), "[  1  10 255]"},
		{"uint8 %x", "%x", arrayOf(t, []uint8{1, 10, 255}, 3), "[ 1  a ff]"},
		{"uint8 %#x", "%#x", arrayOf(t, []uint8{1, 255}, 2), "[ 0x1 0xff]"},
		{"uint8 %-3d", "%-3d", arrayOf(t, []uint8{1, 10}, 2), "[1   10 ]"},
		{"int8 %d", "%d", arrayOf(t, []int8{-128, 5, 127}, 3), "[-128    5  127]"},
		{"int16 %x", "%x", arrayOf(t, []int16{-1, 255}, 2), "[-1 ff]"},
		{"uint32 %d", "%d", arrayOf(t, []uint32{0, 4294967295}, 2), "[         0 4294967295]"},
		{"complex64", "%v", arrayOf(t, []complex64{1 + 2i, 3 - 1i}, 2), "2-element complex64 " + dev + ":\n[(1+2i) (3-1i)]"},
		{"complex64 %.1f", "%.1f", arrayOf(t, []complex64{1 + 2i}, 1), "[(1.0+2.0i)]"},
		{"large 1-d summarized", "%v", arrayOf(t, iota[int32](2000), 2000),
			"2000-element int32 " + dev + ":\n[ 0  1  2 … 97 98 99]"},
		{"large 2-d summarized", "%g", arrayOf(t, iota[float32](10000), 100, 100),
			"[[ 0  1  2 … 97 98 99]\n [ 0  1  2 … 97 98 99]\n [ 0  1  2 … 97 98 99]\n …\n [ 0  1  2 … 97 98 99]\n [ 0  1  2 … 97 98 99]\n [ 0  1  2 … 97 98 99]]"},
		{"large 3-d summarized only on long axes", "%d", arrayOf(t, iota[int32](2*500*2), 2, 500, 2),
			"[[[ 0  1]\n  [ 2  3]\n  [ 4  5]\n  …\n  [94 95]\n  [96 97]\n  [98 99]]\n\n [[ 0  1]\n  [ 2  3]\n  [ 4  5]\n  …\n  [94 95]\n  [96 97]\n  [98 99]]]"},
		{"at the threshold nothing is summarized", "%d", arrayOf(t, filled[int32](cuarray.PrintThreshold, 7), cuarray.PrintThreshold),
			"[" + strings.TrimSuffix(strings.Repeat("7 ", cuarray.PrintThreshold), " ") + "]"},
		{"%+d prints every element", "%+d", arrayOf(t, filled[int32](cuarray.PrintThreshold+1, 7), cuarray.PrintThreshold+1),
			"[" + strings.TrimSuffix(strings.Repeat("7 ", cuarray.PrintThreshold+1), " ") + "]"},
		{"%s is the short name", "%s", arrayOf(t, []float32{1, 2, 3, 4, 5, 6}, 2, 3), "float32[2 3]"},
		{"%q quotes the short name", "%q", arrayOf(t, []uint8{1}, 1), `"uint8[1]"`},
		{"nil", "%v", (*cuarray.Array[float32])(nil), "<nil array>"},
		{"nil %s", "%s", (*cuarray.Array[float32])(nil), "<nil array>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, fmt.Sprintf(c.format, c.arr))
		})
	}
}

func TestFormatPlusVPrintsEveryElement(t *testing.T) {
	a := arrayOf(t, iota[int32](1001), 1001)
	got := fmt.Sprintf("%+v", a)
	head, body, ok := strings.Cut(got, "\n")
	require.True(t, ok)
	assert.Equal(t, "1001-element int32 on device 0 ("+backendName(t)+"):", head)
	assert.NotContains(t, body, "…")
	assert.Len(t, strings.Fields(strings.Trim(body, "[]")), 1001)
}

func TestFormatOfFreedArrayIsAMarker(t *testing.T) {
	a := arrayOf(t, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	v := cuarray.Must(a.Reshape(6)) // a view keeps the memory: the marker is about a
	a.UnsafeFree()
	assert.Equal(t, "2×3 float32 on device 0 ("+backendName(t)+"): <freed>", fmt.Sprint(a))
	assert.Equal(t, "<freed>", fmt.Sprintf("%g", a))
	assert.Equal(t, "float32[2 3]", fmt.Sprintf("%s", a), "errors still name it")
	assert.Equal(t, "[1 2 3 4 5 6]", fmt.Sprintf("%g", v))
}

func TestFormatWaitsForTheWorkThatWroteTheArray(t *testing.T) {
	s := newStream(t, freshPool(t))
	defer s.Close()
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.Zeros(2000))
	require.NoError(t, errOf(f.AddScalar(a, a, 4))) // queued on s; printing runs on s after it
	assert.Equal(t, "[4 4 4 … 4 4 4]", fmt.Sprintf("%g", a))
}

// countingDevice counts the bytes copied to the host: the device of a pool
// whose arrays Format may read only in part.
type countingDevice struct {
	backend.Device
	mu           sync.Mutex
	copies, read uint64
}

func (d *countingDevice) CopyDtoH(dst unsafe.Pointer, src backend.Ptr, n uint64, s backend.Stream) error {
	d.mu.Lock()
	d.copies++
	d.read += n
	d.mu.Unlock()
	return d.Device.CopyDtoH(dst, src, n, s)
}

func (d *countingDevice) counts() (copies, read uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.copies, d.read
}

func TestFormatReadsBackOnlyTheShownElements(t *testing.T) {
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	cd := &countingDevice{Device: dev}
	p, err := pool.New("simple", cd, pool.Limits{})
	require.NoError(t, err)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float64](s)

	cases := []struct {
		name          string
		shape         []int
		format        string
		copies, elems uint64
	}{
		// 3 first and 3 last of 3+3 rows; a row's last 3 and the next
		// row's first 3 are adjacent, one copy: 4 copies per 3 rows.
		{"1000×1000", []int{1000, 1000}, "%v", 8, 36},
		// Whole rows of 4 are contiguous: rows 0-2 and 997-999, two runs.
		{"1000×4", []int{1000, 4}, "%g", 2, 24},
		{"1-d", []int{1 << 20}, "%.1f", 2, 6},
		// 6 blocks of 6 rows of 3+3 elements: 8 copies a block, less one
		// where a block's last row runs into the next block's first.
		{"20×20×20", []int{20, 20, 20}, "%v", 6*8 - 4, 216},
		// Not summarized: one copy of everything.
		{"small", []int{10, 100}, "%v", 1, 1000},
		{"%+v reads all", []int{40, 40}, "%+v", 1, 1600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 1
			for _, d := range c.shape {
				n *= d
			}
			// An upload, not Ones: kernels do not run on a wrapped device.
			a, err := f.FromSlice(filled(n, 1.0), c.shape...)
			require.NoError(t, err)
			defer a.UnsafeFree()
			c0, r0 := cd.counts()
			out := fmt.Sprintf(c.format, a)
			c1, r1 := cd.counts()
			assert.Equal(t, c.copies, c1-c0, "copies to the host")
			assert.Equal(t, c.elems*8, r1-r0, "bytes read back")
			if _, body, ok := strings.Cut(out, ":\n"); ok {
				out = body // the header's digits are not elements
			}
			assert.Equal(t, int(c.elems), strings.Count(out, "1"), "every element read is shown")
		})
	}
}
