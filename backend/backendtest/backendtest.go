package backendtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

// Sizes of the suite. The big buffer makes work slow enough that a
// missing wait is seen: bigRepeats memsets of it take about a millisecond
// on a GPU and tens of milliseconds each on the host, far longer than it
// takes to queue the work that must wait for them.
const (
	bigSize         = 256 << 20
	bigRepeats      = 8
	tailSize        = 4 << 10 // bytes of the big buffer the checks read back
	liveStreams     = 8
	workers         = 16
	cyclesPerWorker = 200
	maxCycleSize    = 16 << 10
)

// Run runs the conformance suite on b as subtests of t. Device-specific
// tests use device 0, cross-device tests the first two devices.
func Run(t *testing.T, b backend.Backend) {
	t.Run("Backend", func(t *testing.T) { testBackend(t, b) })
	t.Run("DeviceOrdinals", func(t *testing.T) { testDeviceOrdinals(t, b) })
	d := device(t, b, 0)
	t.Run("AllocErrors", func(t *testing.T) { testAllocErrors(t, d) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, d) })
	t.Run("Memset", func(t *testing.T) { testMemset(t, d) })
	t.Run("VirtualMemory", func(t *testing.T) { testVirtualMemory(t, d) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, d) })

	// One big buffer serves every slow test, so that each does not pay
	// for first touching 256 MiB. Every test leaves it idle.
	big := alloc(t, d, bigSize)
	t.Run("StreamOrdering", func(t *testing.T) { testStreamOrdering(t, d, big) })
	t.Run("CrossStreamEvent", func(t *testing.T) { testCrossStreamEvent(t, d, big) })
	t.Run("Events", func(t *testing.T) { testEvents(t, d, big) })
	t.Run("Streams", func(t *testing.T) { testStreams(t, d, big) })
	t.Run("DeviceSynchronize", func(t *testing.T) { testDeviceSynchronize(t, d, big) })
	t.Run("CrossDeviceEvent", func(t *testing.T) { testCrossDeviceEvent(t, b, big) })
	t.Run("CopyPeer", func(t *testing.T) { testCopyPeer(t, b, big) })
	t.Run("CopyPeerSameDevice", func(t *testing.T) { testCopyPeerSameDevice(t, d, big) })
	t.Run("Unified", func(t *testing.T) { testUnified(t, d) })
	t.Run("Pinned", func(t *testing.T) { testPinned(t, d) })
	t.Run("Capture", func(t *testing.T) { testCapture(t, d) })
}

func device(t *testing.T, b backend.Backend, ordinal int) backend.Device {
	t.Helper()
	d, err := b.Device(ordinal)
	require.NoError(t, err)
	return d
}

func newStream(t *testing.T, d backend.Device) backend.Stream {
	t.Helper()
	s, err := d.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Destroy()) })
	return s
}

func newEvent(t *testing.T, d backend.Device, timing bool) backend.Event {
	t.Helper()
	e, err := d.NewEvent(timing)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Destroy()) })
	return e
}

// alloc allocates size bytes freed when the test ends. Cleanups run last
// registered first, so a buffer allocated after a stream is freed before
// the stream is destroyed; each test synchronizes before it returns.
func alloc(t *testing.T, d backend.Device, size uint64) backend.Ptr {
	t.Helper()
	p, err := d.Alloc(size)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Free(p)) })
	return p
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], rand.Uint64())
	_, _ = rand.NewChaCha8(seed).Read(b)
	return b
}

func htod(t *testing.T, d backend.Device, dst backend.Ptr, src []byte, s backend.Stream) {
	t.Helper()
	require.NoError(t, d.CopyHtoD(dst, unsafe.Pointer(unsafe.SliceData(src)), uint64(len(src)), s))
}

func dtoh(t *testing.T, d backend.Device, src backend.Ptr, n int, s backend.Stream) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, d.CopyDtoH(unsafe.Pointer(unsafe.SliceData(out)), src, uint64(n), s))
	return out
}

// words decodes native-endian (little-endian on every GPU host) words.
func words(b []byte) []uint32 {
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// requireAll checks that every word is want, reporting the first that is not.
func requireAll(t *testing.T, got []uint32, want uint32, msg string) {
	t.Helper()
	for i, w := range got {
		if w != want {
			require.Failf(t, msg, "word %d of %d is %#x, want %#x", i, len(got), w, want)
		}
	}
}

func testBackend(t *testing.T, b backend.Backend) {
	assert.NotEmpty(t, b.Name())
	assert.GreaterOrEqual(t, b.DriverVersion(), 0)
	require.GreaterOrEqual(t, b.DeviceCount(), 1)
}

func testDeviceOrdinals(t *testing.T, b backend.Backend) {
	n := b.DeviceCount()
	for _, ordinal := range []int{-1, n, n + 7} {
		t.Run(fmt.Sprint(ordinal), func(t *testing.T) {
			d, err := b.Device(ordinal)
			require.ErrorIs(t, err, backend.ErrNoDevice)
			assert.Nil(t, d)
		})
	}
	for ordinal := range n {
		d := device(t, b, ordinal)
		assert.Equal(t, ordinal, d.Ordinal())
		info := d.Info()
		assert.Equal(t, ordinal, info.Ordinal)
		assert.NotEmpty(t, info.Name)
		assert.NotZero(t, info.TotalMemory)
		assert.Positive(t, info.MultiProcessors)
		free, total, err := d.MemInfo()
		require.NoError(t, err)
		assert.NotZero(t, total)
		assert.LessOrEqual(t, free, total)
	}
}

func testAllocErrors(t *testing.T, d backend.Device) {
	_, err := d.Alloc(0)
	require.ErrorIs(t, err, backend.ErrInvalidValue)

	_, err = d.Alloc(2 * d.Info().TotalMemory)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
}

func testRoundTrip(t *testing.T, d backend.Device) {
	s := newStream(t, d)
	for _, size := range []int{1, 4<<10 + 3, 4 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			a := alloc(t, d, uint64(size))
			b := alloc(t, d, uint64(size))
			want := randomBytes(size)
			src := bytes.Clone(want)
			htod(t, d, a, src, s)
			// CopyHtoD promises src may be reused once it returns.
			clear(src)
			require.NoError(t, d.CopyDtoD(b, a, uint64(size), s))
			got := dtoh(t, d, b, size, s)
			require.True(t, bytes.Equal(want, got), "bytes differ after HtoD, DtoD, DtoH")
		})
	}
	t.Run("ZeroBytes", func(t *testing.T) {
		p := alloc(t, d, 16)
		host := make([]byte, 16)
		require.NoError(t, d.CopyHtoD(p, unsafe.Pointer(&host[0]), 0, s))
		require.NoError(t, d.CopyDtoD(p, p, 0, s))
		require.NoError(t, d.CopyDtoH(unsafe.Pointer(&host[0]), p, 0, s))
		require.NoError(t, d.Memset8(p, 1, 0, s))
		require.NoError(t, d.Memset32(p, 1, 0, s))
		require.NoError(t, s.Synchronize())
	})
}

func testMemset(t *testing.T, d backend.Device) {
	const n = 1 << 20
	s := newStream(t, d)
	p := alloc(t, d, n)

	require.NoError(t, d.Memset8(p, 0xAB, n, s))
	require.NoError(t, d.Memset8(p+1000, 0x11, 3000, s))
	got := dtoh(t, d, p, n, s)
	for i, v := range got {
		want := byte(0xAB)
		if i >= 1000 && i < 4000 {
			want = 0x11
		}
		if v != want {
			require.Failf(t, "Memset8", "byte %d is %#x, want %#x", i, v, want)
		}
	}

	require.NoError(t, d.Memset32(p, 0xDEADBEEF, n/4, s))
	require.NoError(t, d.Memset32(p+4096, 0x01020304, 10, s))
	w := words(dtoh(t, d, p, n, s))
	for i, v := range w {
		want := uint32(0xDEADBEEF)
		if i >= 1024 && i < 1034 {
			want = 0x01020304
		}
		if v != want {
			require.Failf(t, "Memset32", "word %d is %#x, want %#x", i, v, want)
		}
	}
}

// testStreamOrdering queues slow writes and a small read on one stream
// with no synchronization between; the read must see the last write.
func testStreamOrdering(t *testing.T, d backend.Device, big backend.Ptr) {
	s := newStream(t, d)
	result := alloc(t, d, tailSize)
	require.NoError(t, d.Memset8(result, 0xEE, tailSize, s))
	for i := range bigRepeats {
		require.NoError(t, d.Memset32(big, uint32(i+1), bigSize/4, s))
	}
	require.NoError(t, d.CopyDtoD(result, big+bigSize-tailSize, tailSize, s))
	requireAll(t, words(dtoh(t, d, result, tailSize, s)), bigRepeats, "read after queued memsets")
}

// testCrossStreamEvent has stream A write a big buffer slowly and record
// an event; stream B waits on the event and reads the buffer's end. B
// must see A's last write, which it would not if WaitEvent did not wait.
func testCrossStreamEvent(t *testing.T, d backend.Device, big backend.Ptr) {
	a := newStream(t, d)
	b := newStream(t, d)
	e := newEvent(t, d, false)
	result := alloc(t, d, tailSize)
	require.NoError(t, d.Memset8(big, 0, bigSize, a))
	require.NoError(t, d.Memset8(result, 0xEE, tailSize, b))
	require.NoError(t, a.Synchronize())
	require.NoError(t, b.Synchronize())

	for i := range bigRepeats {
		require.NoError(t, d.Memset32(big, uint32(i+1), bigSize/4, a))
	}
	require.NoError(t, e.Record(a))
	require.NoError(t, b.WaitEvent(e))
	require.NoError(t, d.CopyDtoD(result, big+bigSize-tailSize, tailSize, b))
	requireAll(t, words(dtoh(t, d, result, tailSize, b)), bigRepeats, "read on B after waiting for A's event")
	require.NoError(t, a.Synchronize())
}

func testEvents(t *testing.T, d backend.Device, big backend.Ptr) {
	s := newStream(t, d)

	t.Run("NeverRecorded", func(t *testing.T) {
		e := newEvent(t, d, false)
		done, err := e.Query()
		require.NoError(t, err)
		assert.True(t, done)
		require.NoError(t, e.Synchronize())
	})

	t.Run("QueryAfterSynchronize", func(t *testing.T) {
		e := newEvent(t, d, false)
		require.NoError(t, d.Memset8(big, 1, bigSize, s))
		require.NoError(t, e.Record(s))
		require.NoError(t, e.Synchronize())
		done, err := e.Query()
		require.NoError(t, err)
		assert.True(t, done)
		// Recording again re-arms the event; it completes again.
		require.NoError(t, d.Memset8(big, 2, bigSize, s))
		require.NoError(t, e.Record(s))
		require.NoError(t, e.Synchronize())
		done, err = e.Query()
		require.NoError(t, err)
		assert.True(t, done)
	})

	t.Run("Elapsed", func(t *testing.T) {
		start := newEvent(t, d, true)
		stop := newEvent(t, d, true)
		require.NoError(t, start.Record(s))
		require.NoError(t, d.Memset8(big, 3, bigSize, s))
		require.NoError(t, stop.Record(s))
		require.NoError(t, stop.Synchronize())
		elapsed, err := stop.Elapsed(start)
		require.NoError(t, err)
		assert.Positive(t, elapsed)
	})

	t.Run("ElapsedWithoutTiming", func(t *testing.T) {
		start := newEvent(t, d, false)
		stop := newEvent(t, d, false)
		require.NoError(t, start.Record(s))
		require.NoError(t, stop.Record(s))
		require.NoError(t, stop.Synchronize())
		_, err := stop.Elapsed(start)
		require.Error(t, err)
	})
}

func testStreams(t *testing.T, d backend.Device, big backend.Ptr) {
	t.Run("QuerySynchronize", func(t *testing.T) {
		s := newStream(t, d)
		done, err := s.Query()
		require.NoError(t, err)
		assert.True(t, done, "a new stream has nothing queued")
		require.NoError(t, d.Memset8(big, 4, bigSize, s))
		require.NoError(t, s.Synchronize())
		done, err = s.Query()
		require.NoError(t, err)
		assert.True(t, done)
		assert.Equal(t, d.Ordinal(), s.Device().Ordinal())
	})

	t.Run("PendingWhileWorkIsQueued", func(t *testing.T) {
		s := newStream(t, d)
		ps, ok := s.(backend.Pending)
		if !ok {
			t.Skipf("%T does not implement backend.Pending", s)
		}
		assert.False(t, ps.Pending(), "a new stream has nothing queued")
		// A large memset takes microseconds at least, and Pending right
		// after queueing a few sees one of them unfinished.
		saw := false
		for i := 0; i < 100 && !saw; i++ {
			for range 4 {
				require.NoError(t, d.Memset8(big, byte(i), bigSize, s))
			}
			saw = ps.Pending()
		}
		assert.True(t, saw, "Pending never said work was queued")
		require.NoError(t, s.Synchronize())
		assert.False(t, ps.Pending(), "nothing is queued after Synchronize")
	})

	t.Run("DistinctIDs", func(t *testing.T) {
		seen := make(map[uint32]bool)
		for range liveStreams {
			s := newStream(t, d)
			require.NotZero(t, s.ID())
			require.False(t, seen[s.ID()], "stream ID %d given to two live streams", s.ID())
			seen[s.ID()] = true
		}
	})

	t.Run("DestroyAfterWork", func(t *testing.T) {
		s, err := d.NewStream()
		require.NoError(t, err)
		p := alloc(t, d, 4096)
		require.NoError(t, d.Memset8(p, 5, 4096, s))
		// Destroy may return before the work is done (cuStreamDestroy
		// does), but the work still runs: the device sync waits for it.
		require.NoError(t, s.Destroy())
		require.NoError(t, d.Synchronize())
		other := newStream(t, d)
		got := dtoh(t, d, p, 4096, other)
		assert.Equal(t, bytes.Repeat([]byte{5}, 4096), got)
	})
}

func testDeviceSynchronize(t *testing.T, d backend.Device, big backend.Ptr) {
	streams := []backend.Stream{newStream(t, d), newStream(t, d)}
	events := []backend.Event{newEvent(t, d, false), newEvent(t, d, false)}
	for i, s := range streams {
		half := backend.Ptr(i * bigSize / 2)
		require.NoError(t, d.Memset8(big+half, byte(i), bigSize/2, s))
		require.NoError(t, events[i].Record(s))
	}
	require.NoError(t, d.Synchronize())
	for i := range streams {
		done, err := streams[i].Query()
		require.NoError(t, err)
		assert.True(t, done, "stream %d busy after Device.Synchronize", i)
		done, err = events[i].Query()
		require.NoError(t, err)
		assert.True(t, done, "event %d pending after Device.Synchronize", i)
	}
}

// testCrossDeviceEvent has a stream of device 1 wait on an event of
// device 0: once the waiting stream is synchronized, the event must be done.
func testCrossDeviceEvent(t *testing.T, b backend.Backend, big backend.Ptr) {
	if b.DeviceCount() < 2 {
		t.Skip("needs two devices")
	}
	d0, d1 := device(t, b, 0), device(t, b, 1)
	a := newStream(t, d0)
	bs := newStream(t, d1)
	e := newEvent(t, d0, false)
	for i := range bigRepeats {
		require.NoError(t, d0.Memset8(big, byte(i), bigSize, a))
	}
	require.NoError(t, e.Record(a))
	require.NoError(t, bs.WaitEvent(e))
	require.NoError(t, bs.Synchronize())
	done, err := e.Query()
	require.NoError(t, err)
	assert.True(t, done, "stream of device 1 finished before the device 0 event it waits on")
}

func testVirtualMemory(t *testing.T, d backend.Device) {
	vm, ok := d.(backend.VirtualMemory)
	if !ok {
		t.Skip("device does not implement backend.VirtualMemory")
	}
	g := vm.Granularity()
	require.NotZero(t, g)
	s := newStream(t, d)

	_, err := vm.CreatePhysical(g + 1)
	require.ErrorIs(t, err, backend.ErrInvalidValue, "CreatePhysical of a size that is not a multiple of the granularity")

	va, err := vm.Reserve(2 * g)
	require.NoError(t, err)
	require.Zero(t, uint64(va)%g, "reservation not aligned to the granularity")
	m1, err := vm.CreatePhysical(g)
	require.NoError(t, err)
	m2, err := vm.CreatePhysical(g)
	require.NoError(t, err)
	require.NotEqual(t, m1, m2)
	require.NoError(t, vm.Map(va, g, m1))
	require.NoError(t, vm.Map(va+backend.Ptr(g), g, m2))
	// A mapping keeps released physical memory alive.
	require.NoError(t, vm.ReleasePhysical(m2))

	// One copy spanning the boundary between the two chunks.
	const span = 64 << 10
	at := va + backend.Ptr(g) - span/2
	want := randomBytes(span)
	htod(t, d, at, want, s)
	require.True(t, bytes.Equal(want, dtoh(t, d, at, span, s)), "bytes differ across the boundary of two mappings")

	// Memset through the mapping, read back on the far side.
	require.NoError(t, d.Memset32(va, 0x5A5A5A5A, 2*g/4, s))
	requireAll(t, words(dtoh(t, d, va+backend.Ptr(2*g)-4096, 4096, s)), 0x5A5A5A5A, "memset through mappings")

	require.NoError(t, s.Synchronize())
	require.NoError(t, vm.Unmap(va, g))
	require.NoError(t, vm.Unmap(va+backend.Ptr(g), g))
	require.NoError(t, vm.ReleasePhysical(m1))
	require.NoError(t, vm.ReleaseAddress(va, 2*g))
}

// testConcurrency runs independent alloc/copy/event/free cycles on many
// goroutines, each with its own stream, and checks every byte.
func testConcurrency(t *testing.T, d backend.Device) {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cycle(d, w); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func cycle(d backend.Device, worker int) (err error) {
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer func() {
		if derr := s.Destroy(); err == nil {
			err = derr
		}
	}()
	e, err := d.NewEvent(false)
	if err != nil {
		return err
	}
	defer func() {
		if derr := e.Destroy(); err == nil {
			err = derr
		}
	}()
	var seed [32]byte
	seed[0] = byte(worker)
	rng := rand.NewChaCha8(seed)
	for i := range cyclesPerWorker {
		n := 1 + int(rng.Uint64()%maxCycleSize)
		if err := oneCycle(d, s, e, rng, n); err != nil {
			return fmt.Errorf("cycle %d (%d bytes): %w", i, n, err)
		}
	}
	return nil
}

func oneCycle(d backend.Device, s backend.Stream, e backend.Event, rng *rand.ChaCha8, n int) error {
	a, err := d.Alloc(uint64(n))
	if err != nil {
		return err
	}
	b, err := d.Alloc(uint64(n))
	if err != nil {
		return errors.Join(err, d.Free(a))
	}
	err = copyAndCheck(d, s, e, rng, a, b, n)
	// Every copy ended with CopyDtoH on s (or failed to queue), so no
	// queued work still uses a or b.
	if serr := s.Synchronize(); serr != nil {
		return errors.Join(err, serr)
	}
	return errors.Join(err, d.Free(a), d.Free(b))
}

func copyAndCheck(d backend.Device, s backend.Stream, e backend.Event, rng *rand.ChaCha8, a, b backend.Ptr, n int) error {
	want := make([]byte, n)
	_, _ = rng.Read(want)
	if err := d.CopyHtoD(a, unsafe.Pointer(&want[0]), uint64(n), s); err != nil {
		return err
	}
	if err := d.CopyDtoD(b, a, uint64(n), s); err != nil {
		return err
	}
	if err := e.Record(s); err != nil {
		return err
	}
	if err := s.WaitEvent(e); err != nil {
		return err
	}
	got := make([]byte, n)
	if err := d.CopyDtoH(unsafe.Pointer(&got[0]), b, uint64(n), s); err != nil {
		return err
	}
	if done, err := e.Query(); err != nil || !done {
		return fmt.Errorf("event recorded before a finished CopyDtoH: done %v, err %v", done, err)
	}
	if !bytes.Equal(want, got) {
		return errors.New("bytes differ after HtoD, DtoD, DtoH")
	}
	return nil
}
