package pooltest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Fuzz limits: sizes up to 8 MiB under a 256 MiB hard limit, so that a
// few dozen large allocations reach out-of-memory and the fuzzer explores
// the pressure path too.
const (
	fuzzHard     = 256 * miB
	fuzzMaxShift = 23 // sizes below 1<<23 = 8 MiB
	fuzzMaxOps   = 400
	fuzzStreams  = 3
	fuzzFreed    = 16 // freed blocks remembered for double frees
)

// Fuzz is the reference-model fuzz target for a strategy:
//
//	func FuzzPool(f *testing.F) { pooltest.Fuzz(f, simple.New) }
func Fuzz(f *testing.F, mk pool.Factory) { Suite{New: mk}.Fuzz(f) }

// Fuzz decodes each input into a sequence of operations — alloc a size on
// one of three streams, free a live block on its stream or another, free
// a block twice, reclaim — runs them against a fresh pool with a 256 MiB
// hard limit, and after every operation checks the pool against a model of
// the live blocks. Block memory is never touched, for speed; the
// conformance tests check contents.
func (s Suite) Fuzz(f *testing.F) {
	require.NotNil(f, s.New, "pooltest: Suite.New is nil")
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	dev := Device(f)
	var streams [fuzzStreams]backend.Stream
	for i := range streams {
		streams[i] = NewStream(f, dev)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &model{t: t, s: s, streams: streams[:]}
		m.e = s.open(t, pool.Limits{Hard: fuzzHard})
		m.run(data)
	})
}

// Fuzz operations: the low 3 bits of an op byte pick the kind, the bits
// above it pick streams; argument bytes follow (0 past the input's end).
const (
	opAlloc      = 0 // 0-3: alloc; stream op>>3 % 3; size from 3 bytes
	opFree       = 4 // 4-5: free live block arg%n; op>>3&1: on another stream
	opReclaim    = 6 // reclaim: arg 0 is All, else arg<<16 bytes
	opDoubleFree = 7 // free a block already freed again
)

type liveBlock struct {
	b      *pool.Block
	stream int
}

// model is what the pool should hold: the live blocks and the counts of
// successful allocs and frees.
type model struct {
	t       *testing.T
	s       Suite
	e       *env
	streams []backend.Stream

	live           []liveBlock
	freed          []*pool.Block
	allocs, frees  uint64
	ops            int
	opFormat       string
	opArgs         []any
	sortedByPtrBuf []liveBlock
}

func (m *model) run(data []byte) {
	arg := func() byte {
		if len(data) == 0 {
			return 0
		}
		v := data[0]
		data = data[1:]
		return v
	}
	m.check()
	for ; len(data) > 0 && m.ops < fuzzMaxOps; m.ops++ {
		op := arg()
		switch op & 7 {
		case opAlloc, opAlloc + 1, opAlloc + 2, opAlloc + 3:
			k := int(op>>3) % fuzzStreams
			shift := arg() % fuzzMaxShift
			lo := uint64(1) << shift
			size := lo + (uint64(arg())<<8|uint64(arg()))%lo
			m.alloc(size, k)
		case opFree, opFree + 1:
			if len(m.live) == 0 {
				continue
			}
			i := int(arg()) % len(m.live)
			k := m.live[i].stream
			if op>>3&1 == 1 {
				k = (k + 1 + int(op>>4&1)) % fuzzStreams
			}
			m.free(i, k)
		case opReclaim:
			n := uint64(pool.All)
			if a := arg(); a != 0 {
				n = uint64(a) << 16
			}
			m.reclaim(n)
		case opDoubleFree:
			if len(m.freed) == 0 {
				continue
			}
			m.doubleFree(m.freed[int(arg())%len(m.freed)], int(op>>3)%fuzzStreams)
		}
		m.check()
	}

	// Free what is left, empty the cache, close.
	for len(m.live) > 0 {
		m.free(len(m.live)-1, m.live[len(m.live)-1].stream)
		m.check()
	}
	m.reclaim(pool.All)
	m.check()
	if r := m.e.p.Stats().Reserved; !m.s.Retains && r != 0 {
		m.fatalf("%d bytes reserved with nothing live after Reclaim(All)", r)
	}
	m.e.close(m.s)
}

func (m *model) liveBytes() (size, req uint64) {
	for _, l := range m.live {
		size += l.b.Size
		req += l.b.Requested
	}
	return size, req
}

// setOp records the operation under way for failure messages; it is
// formatted only if something fails.
func (m *model) setOp(format string, args ...any) {
	m.opFormat, m.opArgs = format, args
}

func (m *model) lastOp() string {
	if m.opFormat == "" {
		return "start"
	}
	return fmt.Sprintf("op %d: ", m.ops) + fmt.Sprintf(m.opFormat, m.opArgs...)
}

func (m *model) alloc(size uint64, k int) {
	m.setOp("Alloc(%d) on stream %d", size, k)
	st := m.streams[k]
	b, err := m.e.p.Alloc(size, st)
	if err != nil {
		var oom *pool.OutOfMemoryError
		if !errors.Is(err, backend.ErrOutOfMemory) || !errors.As(err, &oom) {
			m.fatalf("an Alloc may fail only with an *OutOfMemoryError: %v", err)
		}
		// Without fragmentation the pool gives its cache back under
		// pressure, so it runs out only when live bytes and this request
		// (rounded, at most doubled, plus a 2 MiB step) fill the limit.
		if liveSize, _ := m.liveBytes(); !m.s.Fragments && !m.s.Retains && liveSize+2*size+2*miB <= fuzzHard {
			m.fatalf("out of memory with only %d bytes live under a %d-byte limit: %v", liveSize, fuzzHard, err)
		}
		return
	}
	switch {
	case b == nil:
		m.fatalf("nil block and no error")
	case b.Requested != size:
		m.fatalf("Requested %d", b.Requested)
	case b.Stream != st:
		m.fatalf("Stream is not the stream allocated on")
	}
	for _, l := range m.live {
		if l.b == b {
			m.fatalf("returned a *Block that is already live")
		}
	}
	m.allocs++
	m.live = append(m.live, liveBlock{b, k})
}

func (m *model) free(i, k int) {
	l := m.live[i]
	m.setOp("Free(block %d of %d bytes at %#x) on stream %d", i, l.b.Size, uintptr(l.b.Ptr), k)
	if err := m.e.p.Free(l.b, m.streams[k]); err != nil {
		m.fatalf("%v", err)
	}
	m.frees++
	m.live = slices.Delete(m.live, i, i+1)
	m.freed = append(m.freed, l.b)
	if len(m.freed) > fuzzFreed {
		m.freed = m.freed[1:]
	}
}

func (m *model) doubleFree(b *pool.Block, k int) {
	for _, l := range m.live {
		if l.b == b {
			return // the pool handed the same *Block out again: a free would be legal
		}
	}
	m.setOp("Free of block %#x again, on stream %d", uintptr(b.Ptr), k)
	if err := m.e.p.Free(b, m.streams[k]); !errors.Is(err, backend.ErrInvalidValue) {
		m.fatalf("a double free returned %v, want an error wrapping backend.ErrInvalidValue", err)
	}
}

func (m *model) reclaim(n uint64) {
	m.setOp("Reclaim(%d)", n)
	before := m.e.p.Stats()
	got := m.e.p.Reclaim(n)
	after := m.e.p.Stats()
	if drop := before.Reserved - after.Reserved; got != drop {
		m.fatalf("returned %d, Reserved dropped by %d", got, drop)
	}
	if after.Reclaimed != before.Reclaimed+got {
		m.fatalf("Stats.Reclaimed went from %d to %d after giving back %d", before.Reclaimed, after.Reclaimed, got)
	}
	if want := min(n, before.Cached()); !m.s.Fragments && !m.s.Retains && got < want {
		m.fatalf("gave back %d bytes with %d cached", got, before.Cached())
	}
}

// check compares the pool with the model. It runs after every operation,
// so it tests with plain comparisons and calls t only on failure: testify
// and t.Helper walk the stack on every call, which made the fuzzer spend
// most of its time unwinding.
func (m *model) check() {
	st := m.e.p.Stats()
	size, req := m.liveBytes()
	switch {
	case st.Allocs != m.allocs:
		m.fatalf("Allocs %d, want %d", st.Allocs, m.allocs)
	case st.Frees != m.frees:
		m.fatalf("Frees %d, want %d", st.Frees, m.frees)
	case st.Allocs-st.Frees != uint64(len(m.live)):
		m.fatalf("Allocs-Frees %d, want %d live blocks", st.Allocs-st.Frees, len(m.live))
	case st.Hits+st.Misses != st.Allocs:
		m.fatalf("Hits+Misses %d, Allocs %d", st.Hits+st.Misses, st.Allocs)
	case st.Live != size:
		m.fatalf("Live %d, want the sum of live Block.Size %d", st.Live, size)
	case st.Requested != req:
		m.fatalf("Requested %d, want %d", st.Requested, req)
	case st.Reserved < st.Live:
		m.fatalf("Reserved %d below Live %d", st.Reserved, st.Live)
	case st.Reserved > fuzzHard:
		m.fatalf("Reserved %d above the hard limit %d", st.Reserved, fuzzHard)
	}

	// Live blocks never overlap, are aligned and cover their requests.
	sorted := append(m.sortedByPtrBuf[:0], m.live...)
	m.sortedByPtrBuf = sorted
	slices.SortFunc(sorted, func(a, b liveBlock) int {
		switch {
		case a.b.Ptr < b.b.Ptr:
			return -1
		case a.b.Ptr > b.b.Ptr:
			return 1
		}
		return 0
	})
	for i, l := range sorted {
		b := l.b
		switch {
		case uint64(b.Ptr)%pool.Alignment != 0:
			m.fatalf("block at %#x not %d-byte aligned", uintptr(b.Ptr), pool.Alignment)
		case b.Size < b.Requested:
			m.fatalf("block at %#x: Size %d below Requested %d", uintptr(b.Ptr), b.Size, b.Requested)
		case b.Free:
			m.fatalf("live block at %#x marked Free", uintptr(b.Ptr))
		case b.Owner != m.e.p:
			m.fatalf("block at %#x has another Owner", uintptr(b.Ptr))
		}
		if i > 0 {
			if prev := sorted[i-1].b; uint64(prev.Ptr)+prev.Size > uint64(b.Ptr) {
				m.fatalf("live blocks overlap: [%#x, +%d) and [%#x, +%d)", uintptr(prev.Ptr), prev.Size, uintptr(b.Ptr), b.Size)
			}
		}
	}
}

func (m *model) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("after %s: %s", m.lastOp(), fmt.Sprintf(format, args...))
}

// fuzzSeeds are inputs that reach each operation and the interesting
// paths: reuse on the same stream, hand-off to another stream, frees on
// another stream, double frees, reclaiming, and out of memory.
func fuzzSeeds() [][]byte {
	alloc := func(k int, shift, hi, lo byte) []byte { return []byte{byte(k << 3), shift, hi, lo} }
	free := func(i byte, other bool) []byte {
		if other {
			return []byte{opFree | 1<<3, i}
		}
		return []byte{opFree, i}
	}
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }

	var seeds [][]byte
	seeds = append(seeds, nil)
	// Same size, same stream, twice: the second is a hit.
	seeds = append(seeds, cat(alloc(0, 10, 0, 0), free(0, false), alloc(0, 10, 0, 0), free(0, false)))
	// Freed on stream 0, wanted on stream 1.
	seeds = append(seeds, cat(alloc(0, 20, 1, 2), free(0, false), alloc(1, 20, 1, 2), free(0, false)))
	// Freed on another stream than the one it was allocated on.
	seeds = append(seeds, cat(alloc(0, 16, 0, 9), alloc(2, 5, 0, 1), free(0, true), free(0, true), alloc(1, 16, 0, 9)))
	// Double frees.
	seeds = append(seeds, cat(alloc(0, 12, 0, 0), free(0, false), []byte{opDoubleFree, 0}, []byte{opDoubleFree | 2<<3, 0}))
	// Mixed sizes, reclaiming some and all.
	mixed := cat(alloc(0, 8, 0, 1), alloc(1, 21, 3, 3), alloc(2, 15, 0, 0), free(1, false), []byte{opReclaim, 16},
		alloc(0, 22, 255, 255), free(0, false), []byte{opReclaim, 0}, alloc(1, 3, 0, 0), free(0, true))
	seeds = append(seeds, mixed)
	// Out of memory: large allocations past 256 MiB, then frees and more.
	var oom []byte
	for i := 0; i < 45; i++ {
		oom = append(oom, alloc(i%3, 22, byte(i*37), byte(i))...)
	}
	for i := 0; i < 10; i++ {
		oom = append(oom, free(byte(i*7), i%2 == 0)...)
	}
	oom = append(oom, alloc(1, 22, 255, 255)...)
	oom = append(oom, alloc(2, 4, 0, 0)...)
	seeds = append(seeds, oom)
	return seeds
}
