package host_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
)

// faultEnv is a fresh backend's device 0 with a stream, a buffer, a
// mapped range and an event, for calls that need them.
type faultEnv struct {
	b      *host.Backend
	d      *host.Device
	s      *host.Stream
	buf    backend.Ptr
	va     backend.Ptr // 4 MiB, the first 2 mapped
	empty  backend.Ptr // 2 MiB reserved, nothing mapped
	ph     backend.Physical
	spare  backend.Physical // 2 MiB, mapped nowhere
	ev     backend.Event
	hostMB []byte
}

const faultTotal = 256 << 20

func newFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	b := host.New(host.Options{TotalMemory: faultTotal}).(*host.Backend)
	dev, err := b.Device(0)
	require.NoError(t, err)
	e := &faultEnv{b: b, d: dev.(*host.Device), hostMB: make([]byte, 1<<20)}
	e.s = newStream(t, e.d)
	e.buf, err = e.d.Alloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, e.d.Memset8(e.buf, 7, 1<<20, e.s))
	e.va, err = e.d.Reserve(4 << 20)
	require.NoError(t, err)
	e.empty, err = e.d.Reserve(2 << 20)
	require.NoError(t, err)
	e.ph, err = e.d.CreatePhysical(2 << 20)
	require.NoError(t, err)
	require.NoError(t, e.d.Map(e.va, 2<<20, e.ph))
	// The portable memory path shows a handle at one address at a time:
	// Map's case maps a handle mapped nowhere.
	e.spare, err = e.d.CreatePhysical(2 << 20)
	require.NoError(t, err)
	e.ev, err = e.d.NewEvent(false)
	require.NoError(t, err)
	require.NoError(t, e.s.Synchronize())
	return e
}

// used is the device's allocated bytes.
func (e *faultEnv) used(t *testing.T) uint64 {
	free, total, err := e.d.MemInfo()
	require.NoError(t, err)
	return total - free
}

// Every kind of call fails when told to, with an error matching
// ErrInjected that names the call, and does nothing: no memory taken or
// given back, nothing queued. Once injection is off the same call works.
func TestInjectedFaultFailsTheCallAndChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		op   host.FaultOp
		name string
		call func(e *faultEnv) error
		// unchanged checks, after the failed call, that it did nothing;
		// those that make the call again themselves turn injection off.
		unchanged func(t *testing.T, e *faultEnv, usedBefore uint64)
	}{
		{host.FaultAlloc, "Alloc", func(e *faultEnv) error { _, err := e.d.Alloc(1 << 20); return err }, sameUse},
		{host.FaultAlloc, "CreatePhysical", func(e *faultEnv) error { _, err := e.d.CreatePhysical(2 << 20); return err }, sameUse},
		{host.FaultAlloc, "AllocUnified", func(e *faultEnv) error { _, err := e.d.AllocUnified(1 << 20); return err }, sameUse},
		{host.FaultFree, "Free", func(e *faultEnv) error { return e.d.Free(e.buf) }, func(t *testing.T, e *faultEnv, used uint64) {
			sameUse(t, e, used)
			require.NoError(t, e.b.SetFaults(host.Faults{}))
			require.NoError(t, e.d.Free(e.buf), "the buffer is still allocated")
		}},
		{host.FaultFree, "ReleasePhysical", func(e *faultEnv) error { return e.d.ReleasePhysical(e.ph) }, sameUse},
		{host.FaultFree, "ReleaseAddress", func(e *faultEnv) error { return e.d.ReleaseAddress(e.empty, 2<<20) }, nil},
		{host.FaultReserve, "Reserve", func(e *faultEnv) error { _, err := e.d.Reserve(2 << 20); return err }, nil},
		{host.FaultMap, "Map", func(e *faultEnv) error { return e.d.Map(e.va+(2<<20), 2<<20, e.spare) }, func(t *testing.T, e *faultEnv, _ uint64) {
			require.NoError(t, e.b.SetFaults(host.Faults{}))
			require.NoError(t, e.d.Map(e.va+(2<<20), 2<<20, e.spare), "nothing was mapped there")
		}},
		{host.FaultUnmap, "Unmap", func(e *faultEnv) error { return e.d.Unmap(e.va, 2<<20) }, func(t *testing.T, e *faultEnv, _ uint64) {
			*byteAt(e.va) = 1 // still mapped: no fault
		}},
		{host.FaultStream, "NewStream", func(e *faultEnv) error { _, err := e.d.NewStream(); return err }, nil},
		{host.FaultEvent, "NewEvent", func(e *faultEnv) error { _, err := e.d.NewEvent(false); return err }, nil},
		{host.FaultRecord, "Record", func(e *faultEnv) error { return e.ev.Record(e.s) }, nil},
		{host.FaultWait, "WaitEvent", func(e *faultEnv) error { return e.s.WaitEvent(e.ev) }, nil},
		{host.FaultSync, "Stream.Synchronize", func(e *faultEnv) error { return e.s.Synchronize() }, nil},
		{host.FaultSync, "Device.Synchronize", func(e *faultEnv) error { return e.d.Synchronize() }, nil},
		{host.FaultSync, "Event.Synchronize", func(e *faultEnv) error { return e.ev.Synchronize() }, nil},
		{host.FaultCopy, "CopyHtoD", func(e *faultEnv) error {
			return e.d.CopyHtoD(e.buf, unsafe.Pointer(&e.hostMB[0]), 1<<20, e.s)
		}, bufStillSevens},
		{host.FaultCopy, "CopyDtoD", func(e *faultEnv) error { return e.d.CopyDtoD(e.buf, e.va, 1<<20, e.s) }, bufStillSevens},
		{host.FaultCopy, "CopyDtoH", func(e *faultEnv) error {
			return e.d.CopyDtoH(unsafe.Pointer(&e.hostMB[0]), e.buf, 1<<20, e.s)
		}, func(t *testing.T, e *faultEnv, _ uint64) { assert.Zero(t, e.hostMB[0], "bytes arrived") }},
		{host.FaultMemset, "Memset8", func(e *faultEnv) error { return e.d.Memset8(e.buf, 1, 1<<20, e.s) }, bufStillSevens},
		{host.FaultMemset, "Memset32", func(e *faultEnv) error { return e.d.Memset32(e.buf, 1, 1<<18, e.s) }, bufStillSevens},
		{host.FaultLaunch, "Enqueue", func(e *faultEnv) error {
			return e.s.Enqueue(func() { *byteAt(e.buf) = 1 })
		}, bufStillSevens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			require.NoError(t, e.b.SetFaults(host.Faults{Rules: []host.FaultRule{{Op: tc.op, Nth: 1}}}))
			used := e.used(t)
			err := tc.call(e)
			require.Error(t, err)
			require.ErrorIs(t, err, host.ErrInjected)
			var fe *host.FaultError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.op, fe.Op)
			assert.Equal(t, uint64(1), fe.Call)
			assert.Contains(t, err.Error(), "injected fault")
			assert.Equal(t, host.FaultCount{Calls: 1, Injected: 1}, e.b.FaultCounts()[tc.op])
			if tc.unchanged != nil {
				tc.unchanged(t, e, used)
			}
			if e.b.FaultCounts() != nil {
				// The second call of the kind is not the Nth: it works.
				require.NoError(t, tc.call(e), "the call after the injected one")
			}
		})
	}
}

func sameUse(t *testing.T, e *faultEnv, before uint64) {
	assert.Equal(t, before, e.used(t), "device memory in use changed")
}

func bufStillSevens(t *testing.T, e *faultEnv, _ uint64) {
	require.NoError(t, e.b.SetFaults(host.Faults{}))
	got := make([]byte, 1<<20)
	require.NoError(t, e.d.CopyDtoH(unsafe.Pointer(&got[0]), e.buf, 1<<20, e.s))
	for i, v := range got {
		if v != 7 {
			t.Fatalf("byte %d is %d: the failed call wrote the buffer", i, v)
		}
	}
}

// A rate fails about that share of calls, the same calls for the same
// seed, and each kind draws on its own: one kind's calls do not shift
// another's failures.
func TestFaultRateIsSeededPerKind(t *testing.T) {
	const calls = 2000
	pattern := func(seed uint64, interleave bool) []bool {
		b := host.New(host.Options{TotalMemory: faultTotal}).(*host.Backend)
		dev, err := b.Device(0)
		require.NoError(t, err)
		require.NoError(t, b.SetFaults(host.Faults{Seed: seed, Rules: []host.FaultRule{
			{Op: host.FaultEvent, Rate: 0.25},
			{Op: host.FaultStream, Rate: 0.5},
		}}))
		out := make([]bool, calls)
		for i := range out {
			if interleave {
				if s, err := dev.NewStream(); err == nil {
					_ = s.Destroy()
				}
			}
			_, err := dev.NewEvent(false)
			out[i] = err != nil
		}
		return out
	}
	a, b, c := pattern(1, false), pattern(1, true), pattern(2, false)
	assert.Equal(t, a, b, "another kind's calls changed which events failed")
	assert.NotEqual(t, a, c, "another seed failed the same calls")
	failed := 0
	for _, f := range a {
		if f {
			failed++
		}
	}
	assert.InDelta(t, calls/4, failed, calls/20, "failures at a rate of 0.25")
}

// As makes the fault look like a given failure too: an allocation that
// fails as out of memory goes down a pool's out-of-memory path.
func TestFaultAsMatchesTheGivenSentinel(t *testing.T) {
	b := host.New(host.Options{TotalMemory: faultTotal}).(*host.Backend)
	dev, err := b.Device(0)
	require.NoError(t, err)
	require.NoError(t, b.SetFaults(host.Faults{Rules: []host.FaultRule{{Op: host.FaultAlloc, Nth: 2, As: backend.ErrOutOfMemory}}}))
	p, err := dev.Alloc(4096)
	require.NoError(t, err, "the first call is not the second")
	_, err = dev.Alloc(4096)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	require.ErrorIs(t, err, host.ErrInjected)
	assert.Contains(t, err.Error(), "alloc call 2 fails as out of device memory")
	require.NoError(t, dev.Free(p))
}

func TestSetFaultsRefusesBadRules(t *testing.T) {
	b := host.New(host.Options{TotalMemory: faultTotal}).(*host.Backend)
	keep := host.Faults{Rules: []host.FaultRule{{Op: host.FaultEvent, Nth: 1}}}
	require.NoError(t, b.SetFaults(keep))
	for _, tc := range []struct {
		name string
		f    host.Faults
		want string
	}{
		{"UnknownKind", host.Faults{Rules: []host.FaultRule{{Op: 99, Rate: 1}}}, "kind 99 is not a FaultOp (accepted: alloc, free"},
		{"NegativeKind", host.Faults{Rules: []host.FaultRule{{Op: -1}}}, "kind -1"},
		{"KindTwice", host.Faults{Rules: []host.FaultRule{{Op: host.FaultMap}, {Op: host.FaultMap, Nth: 3}}}, "a second rule for map"},
		{"RateAboveOne", host.Faults{Rules: []host.FaultRule{{Op: host.FaultCopy, Rate: 1.5}}}, "rate 1.5 is not between 0 and 1"},
		{"RateNaN", host.Faults{Rules: []host.FaultRule{{Op: host.FaultCopy, Rate: nanRate()}}}, "rate NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.SetFaults(tc.f)
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), tc.want)
			_, ok := b.FaultCounts()[host.FaultEvent]
			assert.True(t, ok, "the faults in force were replaced by a refused set")
		})
	}
	require.NoError(t, b.SetFaults(host.Faults{}))
	assert.Nil(t, b.FaultCounts(), "a zero Faults turns injection off")
	dev, err := b.Device(0)
	require.NoError(t, err)
	_, err = dev.NewEvent(false)
	assert.False(t, errors.Is(err, host.ErrInjected))
}

func nanRate() float64 {
	zero := 0.0
	return zero / zero
}

// byteAt is the byte at device address p (host memory on this backend),
// converted as the backend itself does, which vet's uintptr check accepts.
func byteAt(p backend.Ptr) *byte { return (*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))) }
