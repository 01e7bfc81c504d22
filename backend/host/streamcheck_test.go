package host_test

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/simple"
)

// checked is a host backend with the stream checker in mode, logging to a
// buffer the test reads (a race in a test is deliberate, not noise).
type checked struct {
	b   *host.Backend
	dev *host.Device
	log *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

const waitFor, tick = 5 * time.Second, time.Millisecond

func newChecked(t *testing.T, mode host.StreamCheck) checked {
	t.Helper()
	log := &syncBuffer{}
	b := host.New(host.Options{Devices: 2, StreamCheck: mode, StreamCheckLog: log}).(*host.Backend)
	d, err := b.Device(0)
	require.NoError(t, err)
	return checked{b: b, dev: d.(*host.Device), log: log}
}

// alloc is memory freed when the test ends, after the device's queued
// work: racing tests leave work queued that may still touch it.
func (c checked) alloc(t *testing.T, size uint64) backend.Ptr {
	t.Helper()
	p, err := c.dev.Alloc(size)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, c.dev.Synchronize())
		assert.NoError(t, c.dev.Free(p))
	})
	return p
}

// here is the file and line of its caller, so that tests compare report
// sites with the lines that queued the work instead of hard-coded numbers.
func here() host.Site {
	pc, file, line, _ := runtime.Caller(1)
	return host.Site{Function: runtime.FuncForPC(pc).Name(), File: file, Line: line}
}

// gate blocks s until the returned func is called, so that work queued
// behind it is still unfinished when the test queues more elsewhere.
func gate(t *testing.T, s *host.Stream) func() {
	t.Helper()
	ch := make(chan struct{})
	require.NoError(t, s.Enqueue(func() { <-ch }))
	var once sync.Once
	open := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(open)
	return open
}

func TestStreamCheckReportsUnorderedWriteThenReadWithBothSites(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p, q := c.alloc(t, 4096), c.alloc(t, 4096)
	open := gate(t, a)

	require.NoError(t, c.dev.Memset8(p+1024, 7, 1024, a)) // write on a
	writeSite := here()
	require.NoError(t, c.dev.CopyDtoD(q, p, 4096, b)) // read on b: nothing orders it after a's write
	readSite := here()
	open()

	races := c.b.StreamRaces()
	require.Len(t, races, 1)
	r := races[0]
	assert.Equal(t, a.ID(), r.Earlier.Stream)
	assert.Equal(t, b.ID(), r.Later.Stream)
	assert.Equal(t, "Memset8", r.Earlier.Op)
	assert.Equal(t, "CopyDtoD", r.Later.Op)
	assert.True(t, r.Earlier.Write)
	assert.False(t, r.Later.Write)
	assert.Equal(t, p+1024, r.Earlier.Ptr)
	assert.Equal(t, uint64(1024), r.Earlier.Bytes)
	assert.Equal(t, p, r.Later.Ptr)
	assert.Equal(t, uint64(4096), r.Later.Bytes)
	assert.Equal(t, p+1024, r.OverlapPtr)
	assert.Equal(t, uint64(1024), r.OverlapBytes)
	assert.True(t, r.EarlierRunning, "a's memset was behind the gate")
	assert.Equal(t, 1, r.Count)

	// here() is on the line after each call.
	assert.Equal(t, writeSite.File, r.Earlier.Site.File)
	assert.Equal(t, writeSite.Line-1, r.Earlier.Site.Line)
	assert.Equal(t, readSite.File, r.Later.Site.File)
	assert.Equal(t, readSite.Line-1, r.Later.Site.Line)
	assert.Equal(t, writeSite.Function, r.Earlier.Site.Function)

	msg := r.String()
	for _, want := range []string{"read by CopyDtoD", "write by Memset8", "still running",
		siteText(writeSite, -1), siteText(readSite, -1)} {
		assert.Contains(t, msg, want)
	}
	logged := c.log.String()
	assert.Contains(t, logged, msg[:strings.Index(msg, "\n")], "the race is logged")
	assert.Contains(t, logged, "host.(*Device).CopyDtoD", "the log has the full stack")
}

func siteText(s host.Site, dline int) string {
	s.Line += dline
	return s.String()
}

func TestStreamCheckReportsRaceEvenWhenTheEarlierWorkHadFinished(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 256)

	require.NoError(t, c.dev.Memset8(p, 1, 256, a))
	// The host learns a's work is done through a channel the checker
	// cannot see: a GPU gives no such guarantee, so this still races.
	ran := make(chan struct{})
	require.NoError(t, a.Enqueue(func() { close(ran) }))
	<-ran
	require.NoError(t, c.dev.Memset8(p, 2, 256, b))

	races := c.b.StreamRaces()
	require.Len(t, races, 1)
	assert.False(t, races[0].EarlierRunning)
	assert.True(t, races[0].Earlier.Write)
	assert.True(t, races[0].Later.Write)
	assert.Contains(t, races[0].String(), "had finished, by chance of timing")
}

// TestStreamCheckOrderedWorkIsNotReported covers every way the host
// backend orders one stream's work after another's: each case writes p on
// a, orders, and then writes and reads p on b.
func TestStreamCheckOrderedWorkIsNotReported(t *testing.T) {
	tests := []struct {
		name  string
		order func(t *testing.T, c checked, a, b *host.Stream)
	}{
		{"event wait", func(t *testing.T, c checked, a, b *host.Stream) {
			e := newEvent(t, c.dev, false)
			require.NoError(t, e.Record(a))
			require.NoError(t, b.WaitEvent(e))
		}},
		{"event wait through a third stream", func(t *testing.T, c checked, a, b *host.Stream) {
			mid := newStream(t, c.dev)
			e1, e2 := newEvent(t, c.dev, false), newEvent(t, c.dev, false)
			require.NoError(t, e1.Record(a))
			require.NoError(t, mid.WaitEvent(e1))
			require.NoError(t, e2.Record(mid))
			require.NoError(t, b.WaitEvent(e2))
		}},
		{"event of another device", func(t *testing.T, c checked, a, b *host.Stream) {
			d1, err := c.b.Device(1)
			require.NoError(t, err)
			mid := newStream(t, d1)
			e1, e2 := newEvent(t, c.dev, false), newEvent(t, d1, false)
			require.NoError(t, e1.Record(a))
			require.NoError(t, mid.WaitEvent(e1))
			require.NoError(t, e2.Record(mid))
			require.NoError(t, b.WaitEvent(e2))
		}},
		{"event wait after the event is done", func(t *testing.T, c checked, a, b *host.Stream) {
			e := newEvent(t, c.dev, false)
			require.NoError(t, e.Record(a))
			ran := make(chan struct{})
			require.NoError(t, a.Enqueue(func() { close(ran) }))
			<-ran
			require.NoError(t, b.WaitEvent(e)) // queues nothing, still orders
		}},
		{"stream synchronize", func(t *testing.T, c checked, a, b *host.Stream) {
			require.NoError(t, a.Synchronize())
		}},
		{"event synchronize", func(t *testing.T, c checked, a, b *host.Stream) {
			e := newEvent(t, c.dev, false)
			require.NoError(t, e.Record(a))
			require.NoError(t, e.Synchronize())
		}},
		{"device synchronize", func(t *testing.T, c checked, a, b *host.Stream) {
			require.NoError(t, c.dev.Synchronize())
		}},
		{"stream query that says done", func(t *testing.T, c checked, a, b *host.Stream) {
			require.Eventually(t, func() bool { done, err := a.Query(); return err == nil && done }, waitFor, tick)
		}},
		{"event query that says done", func(t *testing.T, c checked, a, b *host.Stream) {
			e := newEvent(t, c.dev, false)
			require.NoError(t, e.Record(a))
			require.Eventually(t, func() bool { done, err := e.Query(); return err == nil && done }, waitFor, tick)
		}},
		{"copy to the host", func(t *testing.T, c checked, a, b *host.Stream) {
			var x [8]byte
			q := c.alloc(t, 8)
			require.NoError(t, c.dev.CopyDtoH(unsafe.Pointer(&x[0]), q, 8, a))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecked(t, host.StreamCheckReport)
			a, b := newStream(t, c.dev), newStream(t, c.dev)
			p, q := c.alloc(t, 1024), c.alloc(t, 1024)
			require.NoError(t, c.dev.Memset32(p, 3, 256, a))
			tt.order(t, c, a, b)
			require.NoError(t, c.dev.Memset8(p, 4, 512, b))
			require.NoError(t, c.dev.CopyDtoD(q, p, 1024, b))
			require.NoError(t, c.dev.Synchronize())
			assert.Empty(t, c.b.StreamRaces())
			assert.Empty(t, c.log.String())
		})
	}
}

func TestStreamCheckReadsOnTwoStreamsDoNotRace(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p, qa, qb := c.alloc(t, 1024), c.alloc(t, 1024), c.alloc(t, 1024)
	require.NoError(t, c.dev.Memset8(p, 1, 1024, a))
	require.NoError(t, a.Synchronize())
	open := gate(t, a)
	require.NoError(t, c.dev.CopyDtoD(qa, p, 1024, a))
	require.NoError(t, c.dev.CopyDtoD(qb, p, 1024, b))
	var x [16]byte
	require.NoError(t, c.dev.CopyDtoH(unsafe.Pointer(&x[0]), p, 16, b))
	open()
	require.NoError(t, c.dev.Synchronize())
	assert.Empty(t, c.b.StreamRaces())
}

func TestStreamCheckWriteAfterUnorderedReadRaces(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p, q := c.alloc(t, 64), c.alloc(t, 64)
	require.NoError(t, c.dev.CopyDtoD(q, p, 64, a))
	require.NoError(t, c.dev.Memset8(p, 9, 8, b))
	races := c.b.StreamRaces()
	require.Len(t, races, 1)
	assert.False(t, races[0].Earlier.Write)
	assert.True(t, races[0].Later.Write)
	assert.Equal(t, p, races[0].OverlapPtr)
	assert.Equal(t, uint64(8), races[0].OverlapBytes)
}

func TestStreamCheckDisjointRangesDoNotRace(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 2048)
	require.NoError(t, c.dev.Memset8(p, 1, 1024, a))
	require.NoError(t, c.dev.Memset8(p+1024, 2, 1024, b))
	assert.Empty(t, c.b.StreamRaces())
}

func TestStreamCheckLogsEachPairOfSitesOnceAndCounts(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 64)
	for range 3 {
		require.NoError(t, c.dev.Memset8(p, 1, 64, a))
		require.NoError(t, c.dev.Memset8(p, 2, 64, b))
	}
	races := c.b.StreamRaces()
	// b's memset races with a's each time; a's memset races with b's
	// previous one from the second round on: two pairs of sites.
	require.Len(t, races, 2)
	assert.Equal(t, 3, races[0].Count)
	assert.Equal(t, 2, races[1].Count)
	assert.Equal(t, 2, strings.Count(c.log.String(), "gocuda stream race"))
	assert.GreaterOrEqual(t, len(host.StreamRaces()), 2, "the package-level list has them too")
}

func TestStreamCheckStrictRefusesTheRacingOperation(t *testing.T) {
	c := newChecked(t, host.StreamCheckStrict)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 64)
	require.NoError(t, c.dev.Memset8(p, 1, 64, a))
	err := c.dev.Memset8(p, 2, 64, b)
	require.ErrorIs(t, err, host.ErrStreamRace)
	assert.Contains(t, err.Error(), "Memset8 refused")
	assert.Contains(t, err.Error(), "write by Memset8 on stream")

	// The refused memset was never queued: p holds a's bytes.
	var x [64]byte
	require.NoError(t, c.dev.CopyDtoH(unsafe.Pointer(&x[0]), p, 64, a))
	assert.Equal(t, bytes.Repeat([]byte{1}, 64), x[:])
	require.Len(t, c.b.StreamRaces(), 1)
}

func TestStreamCheckOffReportsNothing(t *testing.T) {
	c := newChecked(t, host.StreamCheckOff)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 64)
	require.NoError(t, c.dev.Memset8(p, 1, 64, a))
	require.NoError(t, c.dev.Memset8(p, 2, 64, b))
	require.NoError(t, c.dev.Synchronize())
	assert.False(t, a.Checking())
	assert.Equal(t, host.StreamCheckOff, c.b.StreamCheck())
	assert.Empty(t, c.b.StreamRaces())
	assert.Empty(t, c.log.String())
}

func TestStreamCheckSwitchedOnChecksOnlyLaterWork(t *testing.T) {
	c := newChecked(t, host.StreamCheckOff)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 64)
	require.NoError(t, c.dev.Memset8(p, 1, 64, a)) // unseen
	require.NoError(t, c.b.SetStreamCheck(host.StreamCheckReport))
	assert.True(t, b.Checking())
	require.NoError(t, c.dev.Memset8(p, 2, 64, b)) // nothing seen to race with
	assert.Empty(t, c.b.StreamRaces())
	require.NoError(t, c.dev.Memset8(p, 3, 64, a)) // races with b's
	assert.Len(t, c.b.StreamRaces(), 1)

	require.NoError(t, c.b.SetStreamCheck(host.StreamCheckOff))
	assert.Len(t, c.b.StreamRaces(), 1, "races found stay after switching off")
	err := c.b.SetStreamCheck(host.StreamCheck(42))
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "StreamCheckReport")
}

func TestStreamCheckFreedMemoryStartsWithNoHistory(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	for range 20 {
		p, err := c.dev.Alloc(1 << 16)
		require.NoError(t, err)
		require.NoError(t, c.dev.Memset8(p, 1, 1<<16, a))
		require.NoError(t, a.Synchronize())
		require.NoError(t, c.dev.Free(p))
		// A fresh allocation, often at the same address, used on b.
		q, err := c.dev.Alloc(1 << 16)
		require.NoError(t, err)
		require.NoError(t, c.dev.Memset8(q, 2, 1<<16, b))
		require.NoError(t, b.Synchronize())
		require.NoError(t, c.dev.Free(q))
	}
	assert.Empty(t, c.b.StreamRaces())
}

// TestStreamCheckPoolReuseAcrossStreamsIsOrdered: a pool hands a block
// freed on a to b through pool.Order, an event the checker sees, so
// reusing the same bytes on b is not a race; the same reuse without the
// pool's event is one.
func TestStreamCheckPoolReuseAcrossStreamsIsOrdered(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	src, err := pool.NewSource(c.dev, pool.Limits{})
	require.NoError(t, err)
	p, err := simple.New(c.dev, src)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.dev.Synchronize(); _ = p.Close() })

	open := gate(t, a)
	blk, err := p.Alloc(4096, a)
	require.NoError(t, err)
	require.NoError(t, c.dev.Memset8(blk.Ptr, 1, 4096, a))
	require.NoError(t, p.Free(blk, a))
	again, err := p.Alloc(4096, b)
	require.NoError(t, err)
	require.Equal(t, blk.Ptr, again.Ptr, "the pool reuses a's block on b")
	require.NoError(t, c.dev.Memset8(again.Ptr, 2, 4096, b))
	open()
	require.NoError(t, p.Free(again, b))
	require.NoError(t, c.dev.Synchronize())
	assert.Empty(t, c.b.StreamRaces())

	// Control: the same reuse with no event between the streams.
	require.NoError(t, c.dev.Memset8(again.Ptr, 3, 4096, a))
	require.NoError(t, c.dev.Memset8(again.Ptr, 4, 4096, b))
	assert.Len(t, c.b.StreamRaces(), 1)
}

func TestStreamCheckEnqueueAccessDeclaresRanges(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	a, b := newStream(t, c.dev), newStream(t, c.dev)
	p := c.alloc(t, 64)
	require.NoError(t, a.EnqueueAccess("my kernel", []host.Access{{Ptr: p, Bytes: 64, Write: true}}, false, func() {}))
	require.NoError(t, b.EnqueueAccess("my reduction", []host.Access{{Ptr: p + 32, Bytes: 32}}, true, func() {}))
	races := c.b.StreamRaces()
	require.Len(t, races, 1)
	assert.Equal(t, "my kernel", races[0].Earlier.Op)
	assert.Equal(t, "my reduction", races[0].Later.Op)

	// hostWaits: the reduction's caller has its result, so later work on a
	// is ordered after the read.
	require.NoError(t, c.dev.Memset8(p, 0, 64, a))
	assert.Len(t, c.b.StreamRaces(), 1)

	for _, bad := range []host.Access{{Ptr: 0, Bytes: 8}, {Ptr: ^backend.Ptr(0) - 4, Bytes: 8}} {
		err := a.EnqueueAccess("bad", []host.Access{bad}, false, func() {})
		require.ErrorIs(t, err, backend.ErrInvalidValue)
		assert.Contains(t, err.Error(), "nil or wrapping range")
	}
	require.ErrorIs(t, a.EnqueueAccess("nil", nil, false, nil), backend.ErrInvalidValue)
}

func TestStreamCheckOnDestroyedStreamIsAnError(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	s, err := c.dev.NewStream()
	require.NoError(t, err)
	require.NoError(t, s.Destroy())
	p := c.alloc(t, 64)
	require.ErrorIs(t, c.dev.Memset8(p, 1, 64, s), backend.ErrInvalidValue)
}

func TestStreamCheckModeFromEnvironment(t *testing.T) {
	tests := []struct {
		value string
		want  host.StreamCheck
	}{
		{"1", host.StreamCheckReport},
		{"true", host.StreamCheckReport},
		{"off", host.StreamCheckOff},
		{"", host.StreamCheckOff},
		{"bogus", host.StreamCheckOff}, // said on stderr, and config rejects it at start-up
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Setenv(config.EnvStreamRace, tt.value)
			b := host.New(host.Options{}).(*host.Backend)
			assert.Equal(t, tt.want, b.StreamCheck())
		})
	}
	t.Setenv(config.EnvStreamRace, "1")
	b := host.New(host.Options{StreamCheck: host.StreamCheckOff}).(*host.Backend)
	assert.Equal(t, host.StreamCheckOff, b.StreamCheck(), "Options win over the environment")
}

// TestStreamCheckConcurrentStreamsWithEvents is the pattern cuarray uses,
// from many goroutines at once: each hands a buffer to the next stream
// through an event. The checker must stay quiet, and -race clean.
func TestStreamCheckConcurrentStreamsWithEvents(t *testing.T) {
	c := newChecked(t, host.StreamCheckReport)
	const workers, rounds = 4, 50
	var wg sync.WaitGroup
	for w := range workers {
		a, b := newStream(t, c.dev), newStream(t, c.dev)
		p := c.alloc(t, 4096)
		ea, eb := newEvent(t, c.dev, false), newEvent(t, c.dev, false)
		wg.Go(func() {
			for i := range rounds {
				assert.NoError(t, c.dev.Memset8(p, byte(w+i), 4096, a))
				assert.NoError(t, ea.Record(a))
				assert.NoError(t, b.WaitEvent(ea))
				assert.NoError(t, c.dev.Memset32(p, uint32(i), 1024, b))
				assert.NoError(t, eb.Record(b))
				assert.NoError(t, a.WaitEvent(eb))
			}
		})
	}
	wg.Wait()
	require.NoError(t, c.dev.Synchronize())
	assert.Empty(t, c.b.StreamRaces())
}
