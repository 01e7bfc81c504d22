package host_test

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/backendtest"
	"github.com/gocuda/gocuda/backend/host"
)

// TestConformance runs the suite on two devices, so that its cross-device
// test runs too; everything else uses device 0 as a one-device backend would.
func TestConformance(t *testing.T) {
	backendtest.Run(t, host.New(host.Options{Devices: 2}))
}

func device(t testing.TB, opts host.Options) *host.Device {
	t.Helper()
	d, err := host.New(opts).Device(0)
	require.NoError(t, err)
	return d.(*host.Device)
}

func newStream(t testing.TB, d backend.Device) *host.Stream {
	t.Helper()
	s, err := d.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Destroy() })
	return s.(*host.Stream)
}

func newEvent(t *testing.T, d backend.Device, timing bool) backend.Event {
	t.Helper()
	e, err := d.NewEvent(timing)
	require.NoError(t, err)
	return e
}

func alloc(t *testing.T, d backend.Device, size uint64) backend.Ptr {
	t.Helper()
	p, err := d.Alloc(size)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Free(p)) })
	return p
}

func TestBackendFacts(t *testing.T) {
	b := host.New(host.Options{})
	assert.Equal(t, "host", b.Name())
	assert.Zero(t, b.DriverVersion())
	assert.Equal(t, 1, b.DeviceCount())
	_, ok := b.(*host.Backend)
	assert.True(t, ok, "New returns *host.Backend")

	d := device(t, host.Options{})
	info := d.Info()
	assert.True(t, info.VirtualMemory)
	assert.False(t, info.MemoryPools)
	assert.True(t, info.UnifiedAddressing)
	assert.True(t, info.ConcurrentManagedAccess)
	assert.NotZero(t, info.TotalMemory)
	if want := memTotal(t); want != 0 {
		assert.Equal(t, want, info.TotalMemory, "default TotalMemory is MemTotal")
	}

	assert.Equal(t, uint64(3<<20), device(t, host.Options{TotalMemory: 3 << 20}).Info().TotalMemory)
	assert.Equal(t, 3, host.New(host.Options{Devices: 3}).DeviceCount())
}

func memTotal(t *testing.T) uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	return 0
}

func TestDeviceOutOfRangeNamesRange(t *testing.T) {
	b := host.New(host.Options{Devices: 2})
	_, err := b.Device(2)
	require.ErrorIs(t, err, backend.ErrNoDevice)
	assert.Contains(t, err.Error(), "0 to 1")
}

func TestEnqueueOrder(t *testing.T) {
	d := device(t, host.Options{})
	s := newStream(t, d)
	var got []int // touched only by the stream's goroutine until Synchronize
	for i := range 1000 {
		require.NoError(t, s.Enqueue(func() { got = append(got, i) }))
	}
	require.NoError(t, s.Synchronize())
	require.Len(t, got, 1000)
	for i, v := range got {
		require.Equal(t, i, v)
	}
	require.ErrorIs(t, s.Enqueue(nil), backend.ErrInvalidValue)
}

// TestEnqueueIsAsync shows that queued work runs later, on another
// goroutine: the caller gets control back while the stream is blocked.
func TestEnqueueIsAsync(t *testing.T) {
	d := device(t, host.Options{})
	s := newStream(t, d)
	gate := make(chan struct{})
	require.NoError(t, s.Enqueue(func() { <-gate }))
	done, err := s.Query()
	require.NoError(t, err)
	assert.False(t, done)
	close(gate)
	require.NoError(t, s.Synchronize())
	done, err = s.Query()
	require.NoError(t, err)
	assert.True(t, done)
}

func TestWaitEventWaits(t *testing.T) {
	d := device(t, host.Options{})
	a, b := newStream(t, d), newStream(t, d)
	e := newEvent(t, d, false)
	gate := make(chan struct{})
	var flag atomic.Bool
	require.NoError(t, a.Enqueue(func() {
		<-gate
		time.Sleep(50 * time.Millisecond)
		flag.Store(true)
	}))
	require.NoError(t, e.Record(a))

	// A is held at the gate, so a WaitEvent that blocked its caller would
	// never return.
	waited := make(chan error, 1)
	go func() { waited <- b.WaitEvent(e) }()
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(gate)
		t.Fatal("WaitEvent blocked its caller until the event completed")
	}

	var seen atomic.Bool
	require.NoError(t, b.Enqueue(func() { seen.Store(flag.Load()) }))
	close(gate)
	require.NoError(t, b.Synchronize())
	assert.True(t, seen.Load(), "B ran before the work A recorded in the event")
}

// TestWaitEventKeepsGeneration checks CUDA's rule: a wait captures the
// event's Record as of the WaitEvent call; recording again later (here on
// an idle stream) does not release it early.
func TestWaitEventKeepsGeneration(t *testing.T) {
	d := device(t, host.Options{})
	a, b, c := newStream(t, d), newStream(t, d), newStream(t, d)
	e := newEvent(t, d, false)
	gate := make(chan struct{})
	require.NoError(t, a.Enqueue(func() { <-gate }))
	require.NoError(t, e.Record(a))
	require.NoError(t, b.WaitEvent(e))
	require.NoError(t, e.Record(c))
	require.NoError(t, e.Synchronize()) // the newest generation, on idle c
	done, err := e.Query()
	require.NoError(t, err)
	assert.True(t, done)

	time.Sleep(10 * time.Millisecond)
	done, err = b.Query()
	require.NoError(t, err)
	assert.False(t, done, "B stopped waiting when the event was recorded again")
	close(gate)
	require.NoError(t, b.Synchronize())
}

// TestNoWaitSeesStaleData is the negative control for the conformance
// suite's cross-stream test: without WaitEvent, B reads before A writes.
func TestNoWaitSeesStaleData(t *testing.T) {
	d := device(t, host.Options{})
	a, b := newStream(t, d), newStream(t, d)
	p := alloc(t, d, 4096)
	require.NoError(t, d.Memset8(p, 0, 4096, a))
	require.NoError(t, a.Synchronize())

	gate := make(chan struct{})
	require.NoError(t, a.Enqueue(func() { <-gate }))
	require.NoError(t, d.Memset8(p, 7, 4096, a))
	got := make([]byte, 4096)
	require.NoError(t, d.CopyDtoH(unsafe.Pointer(&got[0]), p, 4096, b))
	assert.Equal(t, make([]byte, 4096), got, "B saw A's write without waiting for it")
	close(gate)
	require.NoError(t, a.Synchronize())
}

func TestWaitEventNeverRecorded(t *testing.T) {
	d := device(t, host.Options{})
	s := newStream(t, d)
	require.NoError(t, s.WaitEvent(newEvent(t, d, false)))
	require.NoError(t, s.Synchronize())
}

func TestCrossDevice(t *testing.T) {
	b := host.New(host.Options{Devices: 2, TotalMemory: 1 << 30})
	d0, err := b.Device(0)
	require.NoError(t, err)
	d1, err := b.Device(1)
	require.NoError(t, err)
	s0, s1 := newStream(t, d0), newStream(t, d1)

	t.Run("WaitOnOtherDeviceEvent", func(t *testing.T) {
		e := newEvent(t, d0, false)
		var flag atomic.Bool
		require.NoError(t, s0.Enqueue(func() {
			time.Sleep(20 * time.Millisecond)
			flag.Store(true)
		}))
		require.NoError(t, e.Record(s0))
		require.NoError(t, s1.WaitEvent(e))
		var seen atomic.Bool
		require.NoError(t, s1.Enqueue(func() { seen.Store(flag.Load()) }))
		require.NoError(t, s1.Synchronize())
		assert.True(t, seen.Load())
	})

	t.Run("RecordOnOtherDeviceStream", func(t *testing.T) {
		e := newEvent(t, d0, false)
		require.ErrorIs(t, e.Record(s1), backend.ErrInvalidValue)
	})

	t.Run("CopyOnOtherDeviceStream", func(t *testing.T) {
		p := alloc(t, d0, 64)
		require.ErrorIs(t, d0.Memset8(p, 1, 64, s1), backend.ErrInvalidValue)
	})

	t.Run("EventOfAnotherBackend", func(t *testing.T) {
		other := device(t, host.Options{})
		e := newEvent(t, other, false)
		require.ErrorIs(t, s0.WaitEvent(e), backend.ErrInvalidValue)
	})

	t.Run("MemoryIsPerDevice", func(t *testing.T) {
		p := alloc(t, d0, 1<<20)
		free0, _, _ := d0.MemInfo()
		free1, total1, _ := d1.MemInfo()
		assert.Equal(t, total1, free1)
		assert.Equal(t, uint64(1<<30-1<<20), free0)
		require.ErrorIs(t, d1.Free(p), backend.ErrInvalidValue)
	})
}

func TestFreeErrors(t *testing.T) {
	d := device(t, host.Options{})
	p, err := d.Alloc(4096)
	require.NoError(t, err)
	require.NoError(t, d.Free(p))
	require.ErrorIs(t, d.Free(p), backend.ErrInvalidValue, "double free")
	require.ErrorIs(t, d.Free(0), backend.ErrInvalidValue)
	q := alloc(t, d, 8192)
	require.ErrorIs(t, d.Free(q+4096), backend.ErrInvalidValue, "free of an interior pointer")
}

func TestInvalidArguments(t *testing.T) {
	d := device(t, host.Options{})
	s := newStream(t, d)
	p := alloc(t, d, 4096)
	buf := make([]byte, 16)
	tests := []struct {
		name string
		err  error
	}{
		{"UnalignedMemset32", d.Memset32(p+2, 1, 4, s)},
		{"Memset8Nil", d.Memset8(0, 1, 4, s)},
		{"HtoDNilSource", d.CopyHtoD(p, nil, 4, s)},
		{"DtoHNilDest", d.CopyDtoH(nil, p, 4, s)},
		{"DtoDNil", d.CopyDtoD(0, p, 4, s)},
		{"NilStream", d.Memset8(p, 1, 4, nil)},
		{"HtoDNilDest", d.CopyHtoD(0, unsafe.Pointer(&buf[0]), 4, s)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.ErrorIs(t, tt.err, backend.ErrInvalidValue) })
	}
	require.NoError(t, s.Synchronize())
}

func TestDestroyedStream(t *testing.T) {
	d := device(t, host.Options{})
	s, err := d.NewStream()
	require.NoError(t, err)
	hs := s.(*host.Stream)
	p := alloc(t, d, 64)
	e := newEvent(t, d, false)
	require.NoError(t, s.Destroy())

	buf := make([]byte, 64)
	_, qerr := s.Query()
	tests := []struct {
		name string
		err  error
	}{
		{"Destroy", s.Destroy()},
		{"Synchronize", s.Synchronize()},
		{"Query", qerr},
		{"Enqueue", hs.Enqueue(func() {})},
		{"WaitEvent", s.WaitEvent(e)},
		{"Record", e.Record(s)},
		{"Memset8", d.Memset8(p, 1, 64, s)},
		{"CopyHtoD", d.CopyHtoD(p, unsafe.Pointer(&buf[0]), 64, s)},
		{"CopyDtoH", d.CopyDtoH(unsafe.Pointer(&buf[0]), p, 64, s)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.ErrorIs(t, tt.err, backend.ErrInvalidValue) })
	}
	require.NoError(t, d.Synchronize(), "a destroyed stream does not hold up Device.Synchronize")
}

func TestStreamIDReused(t *testing.T) {
	d := device(t, host.Options{})
	s, err := d.NewStream()
	require.NoError(t, err)
	id := s.ID()
	require.NoError(t, s.Destroy())
	s2 := newStream(t, d)
	assert.Equal(t, id, s2.ID(), "the ID of a destroyed stream is handed out again")
}

func TestDestroyedEvent(t *testing.T) {
	d := device(t, host.Options{})
	s := newStream(t, d)
	e := newEvent(t, d, false)
	require.NoError(t, e.Destroy())
	_, qerr := e.Query()
	for _, err := range []error{e.Destroy(), e.Record(s), e.Synchronize(), qerr, s.WaitEvent(e)} {
		require.ErrorIs(t, err, backend.ErrInvalidValue)
	}
}

func TestElapsedErrors(t *testing.T) {
	d := device(t, host.Options{})
	s := newStream(t, d)
	start, stop := newEvent(t, d, true), newEvent(t, d, true)
	_, err := stop.Elapsed(start)
	require.ErrorIs(t, err, backend.ErrInvalidValue, "never recorded")

	gate := make(chan struct{})
	require.NoError(t, start.Record(s))
	require.NoError(t, s.Enqueue(func() { <-gate }))
	require.NoError(t, stop.Record(s))
	_, err = stop.Elapsed(start)
	require.ErrorIs(t, err, host.ErrNotReady)
	close(gate)
	require.NoError(t, stop.Synchronize())
	elapsed, err := stop.Elapsed(start)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, elapsed, time.Duration(0))

	plain := newEvent(t, d, false)
	require.NoError(t, plain.Record(s))
	require.NoError(t, plain.Synchronize())
	_, err = stop.Elapsed(plain)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
}

func TestOutOfMemory(t *testing.T) {
	const total = 4 << 20
	d := device(t, host.Options{TotalMemory: total})
	p, err := d.Alloc(3 << 20)
	require.NoError(t, err)
	free, tot, err := d.MemInfo()
	require.NoError(t, err)
	assert.Equal(t, uint64(total), tot)
	assert.Equal(t, uint64(1<<20), free)

	_, err = d.Alloc(2 << 20)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "2097152", "names the request")
	assert.Contains(t, err.Error(), "1048576", "names the free bytes")

	_, err = d.CreatePhysical(2 << 20)
	require.ErrorIs(t, err, backend.ErrOutOfMemory, "physical memory shares the budget")

	require.NoError(t, d.Free(p))
	free, _, _ = d.MemInfo()
	assert.Equal(t, uint64(total), free)
	m, err := d.CreatePhysical(4 << 20)
	require.NoError(t, err)
	free, _, _ = d.MemInfo()
	assert.Zero(t, free)
	require.NoError(t, d.ReleasePhysical(m))
	free, _, _ = d.MemInfo()
	assert.Equal(t, uint64(total), free)
}

// TestNoReserve allocates more than this test should ever touch: with
// MAP_NORESERVE, the process's resident memory grows only by what is
// written.
func TestNoReserve(t *testing.T) {
	d := device(t, host.Options{TotalMemory: 64 << 30})
	s := newStream(t, d)
	before := rss(t)
	p, err := d.Alloc(8 << 30)
	require.NoError(t, err)
	require.NoError(t, d.Memset8(p, 1, 4096, s))
	require.NoError(t, d.Memset8(p+(8<<30)-4096, 1, 4096, s))
	require.NoError(t, s.Synchronize())
	grown := int64(rss(t)) - int64(before)
	assert.Less(t, grown, int64(64<<20), "8 GiB mapping cost resident memory")
	require.NoError(t, d.Free(p))
}

func rss(t *testing.T) uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	f := strings.Fields(string(data))
	pages, err := strconv.ParseUint(f[1], 10, 64)
	require.NoError(t, err)
	return pages * uint64(os.Getpagesize())
}

func TestDeviceSynchronizeWaitsForAllStreams(t *testing.T) {
	d := device(t, host.Options{})
	var finished atomic.Int32
	for range 4 {
		s := newStream(t, d)
		require.NoError(t, s.Enqueue(func() {
			time.Sleep(20 * time.Millisecond)
			finished.Add(1)
		}))
	}
	require.NoError(t, d.Synchronize())
	assert.Equal(t, int32(4), finished.Load())
}

func TestVirtualMemoryErrors(t *testing.T) {
	d := device(t, host.Options{TotalMemory: 1 << 30})
	g := d.Granularity()
	require.Equal(t, uint64(2<<20), g)

	_, err := d.Reserve(g + 4096)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	_, err = d.Reserve(0)
	require.ErrorIs(t, err, backend.ErrInvalidValue)

	va, err := d.Reserve(4 * g)
	require.NoError(t, err)
	m, err := d.CreatePhysical(2 * g)
	require.NoError(t, err)
	small, err := d.CreatePhysical(g)
	require.NoError(t, err)

	tests := []struct {
		name string
		err  error
	}{
		{"MapUnaligned", d.Map(va+4096, g, m)},
		{"MapBadHandle", d.Map(va, g, 999)},
		{"MapLargerThanPhysical", d.Map(va, 2*g, small)},
		{"MapPastReservation", d.Map(va+backend.Ptr(3*g), 2*g, m)},
		{"MapOutsideReservation", d.Map(va+backend.Ptr(64*g), g, m)},
		{"UnmapNothing", d.Unmap(va, g)},
		{"ReleaseBadHandle", d.ReleasePhysical(999)},
		{"ReleaseAddressWrongSize", d.ReleaseAddress(va, g)},
		{"ReleaseAddressNotReserved", d.ReleaseAddress(va+backend.Ptr(g), g)},
		{"FreeOfReservation", d.Free(va)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.ErrorIs(t, tt.err, backend.ErrInvalidValue) })
	}

	require.NoError(t, d.Map(va, 2*g, m))
	require.ErrorIs(t, d.Map(va+backend.Ptr(g), g, small), backend.ErrInvalidValue, "overlapping map")
	require.ErrorIs(t, d.Unmap(va, g), backend.ErrInvalidValue, "partial unmap")
	require.ErrorIs(t, d.ReleaseAddress(va, 4*g), backend.ErrInvalidValue, "release while mapped")
	require.NoError(t, d.Map(va+backend.Ptr(2*g), g, small))

	var other backend.Physical // the portable path's stand-in for a second mapping of small
	if mapsTwice {
		// One physical handle mapped twice aliases, as on CUDA.
		require.NoError(t, d.Map(va+backend.Ptr(3*g), g, small))
		s := newStream(t, d)
		require.NoError(t, d.Memset8(va+backend.Ptr(2*g), 0x42, 16, s))
		got := make([]byte, 16)
		require.NoError(t, d.CopyDtoH(unsafe.Pointer(&got[0]), va+backend.Ptr(3*g), 16, s))
		assert.Equal(t, bytes.Repeat([]byte{0x42}, 16), got)
	} else {
		err := d.Map(va+backend.Ptr(3*g), g, small)
		require.ErrorIs(t, err, backend.ErrNotSupported, "a second mapping of one handle")
		assert.Contains(t, err.Error(), "mapped already")
		other, err = d.CreatePhysical(g)
		require.NoError(t, err)
		require.NoError(t, d.Map(va+backend.Ptr(3*g), g, other))
	}

	// Unmap may cover several whole mappings at once.
	require.NoError(t, d.Unmap(va, 4*g))
	require.NoError(t, d.ReleasePhysical(m))
	require.NoError(t, d.ReleasePhysical(small))
	require.ErrorIs(t, d.ReleasePhysical(small), backend.ErrInvalidValue, "double release")
	if other != 0 {
		require.NoError(t, d.ReleasePhysical(other))
	}
	require.NoError(t, d.ReleaseAddress(va, 4*g))
	require.ErrorIs(t, d.ReleaseAddress(va, 4*g), backend.ErrInvalidValue, "double release")
	free, total, _ := d.MemInfo()
	assert.Equal(t, total, free)
}

// TestVirtualMemoryKeepsBytesAcrossMoves maps handles, unmaps them and maps
// them elsewhere, as pools do when they move memory: a handle keeps its
// bytes wherever it is mapped, a handle mapped where another one was first
// mapped gets memory of its own, and released memory comes back as zeros.
func TestVirtualMemoryKeepsBytesAcrossMoves(t *testing.T) {
	d := device(t, host.Options{TotalMemory: 1 << 30})
	g := d.Granularity()
	s := newStream(t, d)
	at := func(va backend.Ptr, i uint64) backend.Ptr { return va + backend.Ptr(i*g) }
	set := func(p backend.Ptr, v byte) {
		t.Helper()
		require.NoError(t, d.Memset8(p, v, 64, s))
		require.NoError(t, s.Synchronize()) // before any Unmap
	}
	get := func(p backend.Ptr) byte {
		t.Helper()
		out := make([]byte, 64)
		require.NoError(t, d.CopyDtoH(unsafe.Pointer(&out[0]), p, 64, s))
		require.Equal(t, bytes.Repeat(out[:1], 64), out, "bytes at %#x differ", uintptr(p))
		return out[0]
	}
	create := func(n uint64) backend.Physical {
		t.Helper()
		m, err := d.CreatePhysical(n * g)
		require.NoError(t, err)
		return m
	}

	va, err := d.Reserve(8 * g)
	require.NoError(t, err)
	m1 := create(2)
	require.NoError(t, d.Map(va, 2*g, m1))
	set(at(va, 1)+5, 0x11)

	// Moved: the bytes go along.
	require.NoError(t, d.Unmap(va, 2*g))
	require.NoError(t, d.Map(at(va, 4), 2*g, m1))
	assert.Equal(t, byte(0x11), get(at(va, 5)+5))

	// A new handle where m1 was first mapped is memory of its own.
	m2 := create(1)
	require.NoError(t, d.Map(va, g, m2))
	assert.Zero(t, get(va))
	set(va, 0x22)
	assert.Equal(t, byte(0x11), get(at(va, 5)+5))

	// Unmapped and mapped again, each keeps its bytes; one Unmap may
	// cover mappings of both kinds.
	m4 := create(1)
	require.NoError(t, d.Map(at(va, 1), g, m4))
	set(at(va, 1), 0x33)
	require.NoError(t, d.Unmap(va, 2*g))
	require.NoError(t, d.Unmap(at(va, 4), 2*g))
	require.NoError(t, d.Map(at(va, 2), g, m2))
	assert.Equal(t, byte(0x22), get(at(va, 2)))
	require.NoError(t, d.Map(at(va, 4), 2*g, m1))
	assert.Equal(t, byte(0x11), get(at(va, 5)+5))
	require.NoError(t, d.Unmap(at(va, 4), 2*g))
	require.NoError(t, d.Map(va, 2*g, m1))
	assert.Equal(t, byte(0x11), get(at(va, 1)+5))

	// Released while mapped, m1 lives until unmapped; then its memory is
	// freed, and a new handle there reads zeros.
	require.NoError(t, d.ReleasePhysical(m1))
	assert.Equal(t, byte(0x11), get(at(va, 1)+5))
	require.NoError(t, d.Unmap(va, 2*g))
	m3 := create(2)
	require.NoError(t, d.Map(va, 2*g, m3))
	assert.Zero(t, get(at(va, 1)+5))

	// m4, unmapped where m1 and then m3 were mapped since, kept its bytes.
	require.NoError(t, d.Map(at(va, 6), g, m4))
	assert.Equal(t, byte(0x33), get(at(va, 6)))

	require.NoError(t, s.Synchronize())
	require.NoError(t, d.Unmap(va, 2*g))
	require.NoError(t, d.Unmap(at(va, 2), g))
	require.NoError(t, d.Unmap(at(va, 6), g))
	for _, m := range []backend.Physical{m2, m3, m4} {
		require.NoError(t, d.ReleasePhysical(m))
	}
	require.NoError(t, d.ReleaseAddress(va, 8*g))
}

// TestVirtualMemoryKeepsBytesOfHandlesMappedInPart maps a part of a handle,
// and a handle whose reservation went: the bytes not shown are kept.
func TestVirtualMemoryKeepsBytesOfHandlesMappedInPart(t *testing.T) {
	d := device(t, host.Options{TotalMemory: 1 << 30})
	g := d.Granularity()
	s := newStream(t, d)
	set := func(p backend.Ptr, v byte) {
		t.Helper()
		require.NoError(t, d.Memset8(p, v, 1, s))
		require.NoError(t, s.Synchronize())
	}
	get := func(p backend.Ptr) byte {
		t.Helper()
		var out byte
		require.NoError(t, d.CopyDtoH(unsafe.Pointer(&out), p, 1, s))
		return out
	}
	va, err := d.Reserve(8 * g)
	require.NoError(t, err)
	m, err := d.CreatePhysical(2 * g)
	require.NoError(t, err)
	require.NoError(t, d.Map(va, 2*g, m))
	set(va+5, 0x55)
	set(va+backend.Ptr(g)+5, 0x44)
	require.NoError(t, d.Unmap(va, 2*g))

	// Its first granule only, elsewhere, then all of it where it was.
	require.NoError(t, d.Map(va+backend.Ptr(4*g), g, m))
	assert.Equal(t, byte(0x55), get(va+backend.Ptr(4*g)+5))
	require.NoError(t, d.Unmap(va+backend.Ptr(4*g), g))
	require.NoError(t, d.Map(va, 2*g, m))
	assert.Equal(t, byte(0x55), get(va+5))
	assert.Equal(t, byte(0x44), get(va+backend.Ptr(g)+5))
	require.NoError(t, d.Unmap(va, 2*g))

	// Its reservation released while it is unmapped, it keeps its bytes.
	require.NoError(t, d.ReleaseAddress(va, 8*g))
	other, err := d.Reserve(2 * g)
	require.NoError(t, err)
	require.NoError(t, d.Map(other, 2*g, m))
	assert.Equal(t, byte(0x55), get(other+5))
	assert.Equal(t, byte(0x44), get(other+backend.Ptr(g)+5))
	require.NoError(t, d.Unmap(other, 2*g))
	require.NoError(t, d.ReleasePhysical(m))
	require.NoError(t, d.ReleaseAddress(other, 2*g))
}

// TestVirtualMemoryFaultsWhereNothingIsMapped touches a reservation before
// Map, while mapped and after Unmap: only the mapped range is memory, as
// on a GPU, on the memfd path and the portable one alike.
func TestVirtualMemoryFaultsWhereNothingIsMapped(t *testing.T) {
	d := device(t, host.Options{TotalMemory: 1 << 30})
	g := d.Granularity()
	va, err := d.Reserve(2 * g)
	require.NoError(t, err)
	m, err := d.CreatePhysical(g)
	require.NoError(t, err)
	faults := func(p backend.Ptr) (faulted bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { faulted = recover() != nil }()
		*(*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))) = 1
		return false
	}
	tests := []struct {
		name   string
		setup  func()
		at     backend.Ptr
		faults bool
	}{
		{"Reserved", func() {}, va, true},
		{"Mapped", func() { require.NoError(t, d.Map(va, g, m)) }, va + 100, false},
		{"BesideTheMapping", func() {}, va + backend.Ptr(g), true},
		{"Unmapped", func() { require.NoError(t, d.Unmap(va, g)) }, va + 100, true},
	}
	for _, tt := range tests {
		tt.setup()
		assert.Equal(t, tt.faults, faults(tt.at), tt.name)
	}
	require.NoError(t, d.ReleasePhysical(m))
	require.NoError(t, d.ReleaseAddress(va, 2*g))
}

// TestAllocIsZeroedAndPageAligned holds on every path: memory straight
// from the OS, whatever was freed before it.
func TestAllocIsZeroedAndPageAligned(t *testing.T) {
	d := device(t, host.Options{TotalMemory: 1 << 30})
	s := newStream(t, d)
	for _, size := range []uint64{1, 4095, 4097, 3 << 20} {
		for round := range 2 { // the second round may get the first one's pages back
			p, err := d.Alloc(size)
			require.NoError(t, err)
			assert.Zero(t, uint64(p)%uint64(os.Getpagesize()), "Alloc(%d) at %#x", size, uintptr(p))
			got := make([]byte, size)
			require.NoError(t, d.CopyDtoH(unsafe.Pointer(&got[0]), p, size, s))
			assert.Equal(t, make([]byte, size), got, "Alloc(%d), round %d, is not zeroed", size, round)
			require.NoError(t, d.Memset8(p, 0xff, size, s))
			require.NoError(t, s.Synchronize())
			require.NoError(t, d.Free(p))
		}
	}
}
