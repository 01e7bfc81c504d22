package cuarray_test

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
)

// Unified and pinned arrays are read and written by the host through Host,
// by kernels, and by copies, and the host sees a kernel's result after a
// long kernel queued before it without any explicit synchronization.
func TestUnifiedAndPinnedArraysAreHostAddressable(t *testing.T) {
	for _, kind := range []cuarray.Kind{cuarray.Unified, cuarray.Pinned} {
		t.Run(kind.String(), func(t *testing.T) {
			s, err := cuarray.NewStream(0)
			require.NoError(t, err)
			f := cuarray.On[float32](s)
			a, err := f.NewKind(kind, 4, 256)
			require.NoError(t, err)
			assert.Equal(t, kind, a.Kind())
			h, err := a.Host()
			require.NoError(t, err)
			require.Len(t, h, 1024)
			for i := range h {
				h[i] = float32(i)
			}
			require.NoError(t, testhook.Spin(s.Device(), s.Backend(), 50*time.Millisecond))
			require.NoError(t, errOf(f.MulScalar(a, a, 2)))
			h, err = a.Host() // waits for the spin and the multiply
			require.NoError(t, err)
			assert.Equal(t, float32(2*1023), h[1023])
			assert.Equal(t, float32(2*7), h[7])
			got, err := a.ToSlice()
			require.NoError(t, err)
			assert.Equal(t, h, got)

			d := cuarray.Must(f.Zeros(4, 256)) // device memory
			require.NoError(t, f.Copy(d, a))
			assert.Equal(t, got, read(t, d))
			_, err = d.Host()
			require.ErrorIs(t, err, backend.ErrInvalidValue, "device memory has no host slice")
			assert.Contains(t, err.Error(), "ToSlice")
			runtime.KeepAlive(a)
			a.UnsafeFree()
			_, err = a.Host()
			require.ErrorIs(t, err, cuarray.ErrFreed)
		})
	}
	_, err := cuarray.On[float32](nil).NewKind(cuarray.Kind(9), 3)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "Device, Unified and Pinned")
	assert.Equal(t, "unified", cuarray.Unified.String())
	u := cuarray.Must(cuarray.NewUnified[int32](3))
	assert.Equal(t, cuarray.Unified, u.Kind())
	assert.Equal(t, cuarray.Pinned, cuarray.Must(cuarray.NewPinned[uint8](5)).Kind())
}

// Unified memory is never asked for beyond what the device has free.
func TestUnifiedLargerThanFreeMemoryIsOutOfMemory(t *testing.T) {
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	free, _, err := dev.MemInfo()
	require.NoError(t, err)
	_, err = cuarray.NewUnified[uint8](int(free) + 1<<30)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "free")
}

// twoDevices skips unless the backend has two devices (the host backend
// offers two; a GPU machine needs two GPUs).
func twoDevices(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.DeviceCount() < 2 {
		t.Skipf("needs two devices; the %s backend has %d", b.Name(), b.DeviceCount())
	}
}

// Copies between devices give the source's value after the work queued on
// it (a long kernel, then a write), and later writes to the source wait for
// the copy; both directions, peer to peer and staged.
func TestCopyAcrossDevices(t *testing.T) {
	twoDevices(t)
	modes := []string{"direct"}
	if dev, _ := gocuda.Device(0); isCUDA(dev) {
		modes = append(modes, "staged")
	}
	for _, mode := range modes {
		for _, n := range []int{1000, 3 << 20} { // 3M floats: 12 MiB, two staging chunks
			for _, dir := range [][2]int{{0, 1}, {1, 0}} {
				t.Run(fmt.Sprintf("%s/%d_to_%d/%d", mode, dir[0], dir[1], n), func(t *testing.T) {
					testhook.StagePeerCopies.Store(mode == "staged")
					defer testhook.StagePeerCopies.Store(false)
					ss, err := cuarray.NewStream(dir[0])
					require.NoError(t, err)
					ds, err := cuarray.NewStream(dir[1])
					require.NoError(t, err)
					fs, fd := cuarray.On[float32](ss), cuarray.On[float32](ds)
					src := cuarray.Must(fs.FromSlice(iota[float32](n)))
					require.NoError(t, testhook.Spin(ss.Device(), ss.Backend(), 50*time.Millisecond))
					require.NoError(t, errOf(fs.AddScalar(src, src, 1))) // after the spin
					dst := cuarray.Must(fd.Zeros(n))
					require.NoError(t, fd.Copy(dst, src))
					require.NoError(t, fs.Fill(src, -1)) // must wait for the copy's read
					want := iota[float32](n)
					for i := range want {
						want[i]++
					}
					assert.Equal(t, want, read(t, dst))
					assert.Equal(t, float32(-1), read(t, src)[n-1])
					assert.Equal(t, dir[1], dst.Device().Ordinal())
				})
			}
		}
	}
}

func isCUDA(d backend.Device) bool {
	_, ok := d.(*cudabackend.Device)
	return ok
}

// ToDevice and Clone move arrays between devices; operations that mix
// devices without a copy are refused with a message that says to copy.
func TestToDeviceAndMixedDeviceErrors(t *testing.T) {
	twoDevices(t)
	a := cuarray.Must(cuarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	b, err := cuarray.ToDevice(a, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, b.Device().Ordinal())
	assert.Equal(t, []int{2, 3}, b.Shape())
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, read(t, b))
	back, err := cuarray.On[float64](nil).Clone(b)
	require.NoError(t, err)
	assert.Equal(t, 0, back.Device().Ordinal())
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, read(t, back))

	_, err = cuarray.Add(a, a, b)
	require.ErrorIs(t, err, cuarray.ErrDevice)
	assert.Contains(t, err.Error(), "copy one first")
	_, err = cuarray.ToDevice(a, 7)
	require.ErrorIs(t, err, backend.ErrNoDevice)
	b.UnsafeFree()
	_, err = cuarray.ToDevice(b, 0)
	require.ErrorIs(t, err, cuarray.ErrFreed)
	s1, err := cuarray.NewStream(1)
	require.NoError(t, err)
	err = cuarray.On[float64](s1).Copy(back, a) // both on device 0, stream on 1
	require.ErrorIs(t, err, cuarray.ErrDevice)
}

// batchesOf yields n batches of rows×cols, batch i filled with i.
func batchesOf(n, rows, cols int) iter.Seq[cuarray.HostBatch[float32]] {
	return func(yield func(cuarray.HostBatch[float32]) bool) {
		data := make([]float32, rows*cols)
		for i := range n {
			for j := range data {
				data[j] = float32(i)
			}
			if !yield(cuarray.HostBatch[float32]{Data: data, Shape: []int{rows, cols}}) {
				return
			}
		}
	}
}

// Batches yields every batch, uploaded, in order, and frees each when the
// loop moves on, whether it runs to the end or breaks early.
func TestBatchesUploadAheadAndFreeEachBatch(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	i := 0
	for x, err := range f.Batches(batchesOf(10, 64, 32)) {
		require.NoError(t, err)
		assert.Equal(t, []int{64, 32}, x.Shape())
		sum, err := f.Sum(x)
		require.NoError(t, err)
		assert.Equal(t, float32(i*64*32), sum, "batch %d", i)
		live := p.Stats().Allocs - p.Stats().Frees
		assert.LessOrEqual(t, live, uint64(2), "at most the batch in use and the one ahead")
		i++
	}
	assert.Equal(t, 10, i)
	st := p.Stats()
	assert.Equal(t, uint64(10), st.Allocs)
	assert.Equal(t, uint64(10), st.Frees, "every batch freed when the loop ended: %v", st)

	var kept *cuarray.Array[float32]
	for x, err := range f.Batches(batchesOf(1000, 8, 8)) {
		require.NoError(t, err)
		kept = x
		break
	}
	require.True(t, kept.Freed(), "a batch is freed when the loop breaks")
	require.Eventually(t, func() bool { st := p.Stats(); return st.Allocs == st.Frees }, 5*time.Second, time.Millisecond,
		"the batch uploaded ahead is freed too")
}

// A batch that does not fit its shape ends the loop with that error.
func TestBatchesYieldUploadErrorOnce(t *testing.T) {
	bad := func(yield func(cuarray.HostBatch[float32]) bool) {
		if !yield(cuarray.HostBatch[float32]{Data: []float32{1, 2, 3, 4}, Shape: []int{2, 2}}) {
			return
		}
		yield(cuarray.HostBatch[float32]{Data: []float32{1, 2, 3}, Shape: []int{2, 2}})
	}
	var errs []error
	n := 0
	for x, err := range cuarray.Batches[float32](bad) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		assert.Equal(t, []float32{1, 2, 3, 4}, read(t, x))
	}
	assert.Equal(t, 1, n)
	require.Len(t, errs, 1)
	assert.True(t, errors.Is(errs[0], cuarray.ErrShape), "%v", errs[0])
}
