package split

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// checkInvariants walks every stream's heaps and checks what the pool
// relies on: blocks tile each segment in address order, no two free blocks
// are neighbours (they would have merged), the free set holds exactly the
// free blocks, live counts match, every live block is mapped, and the
// source's Reserved is exactly the mapped chunks plus ordinary segments.
func checkInvariants(p *Pool) error {
	var accounted uint64
	var err error
	p.streams.Each(func(st *streamState) {
		st.mu.Lock()
		defer st.mu.Unlock()
		var liveBytes uint64
		for k := range st.heaps {
			h := &st.heaps[k]
			free := 0
			for _, seg := range h.segs {
				if e := checkSegment(st, h, seg); e != nil && err == nil {
					err = e
				}
				for b := seg.first; b != nil; b = b.Next {
					if b.Free {
						free++
					}
					if b.Requested > 0 { // handed out, not freed
						liveBytes += b.Size
					}
				}
				if seg.virtual {
					accounted += uint64(seg.mapped) * seg.gran
				} else {
					accounted += seg.size
				}
			}
			if free != h.free.len() && err == nil {
				err = fmt.Errorf("heap %d: %d free blocks in segments, %d in the free set", k, free, h.free.len())
			}
		}
		// A block's allocation and free are counted on the stream that
		// owns its segment: each stream's count is its blocks'.
		if liveBytes != st.counts.live && err == nil {
			err = fmt.Errorf("stream %p: live blocks of %d bytes, counted %d", st, liveBytes, st.counts.live)
		}
	})
	if err == nil && accounted != p.src.Reserved() {
		err = fmt.Errorf("Reserved is %d, mapped chunks and segments %d", p.src.Reserved(), accounted)
	}
	return err
}

func checkSegment(st *streamState, h *heap, seg *segment) error {
	if seg.owner.Load() != st || seg.heap != h || seg.first.Prev != nil || seg.last.Next != nil {
		return fmt.Errorf("segment %#x: wrong owner, heap or ends", uintptr(seg.base))
	}
	at, live := seg.base, 0
	for b := seg.first; b != nil; b = b.Next {
		switch {
		case b.Ptr != at:
			return fmt.Errorf("segment %#x: block at %#x, want %#x", uintptr(seg.base), uintptr(b.Ptr), uintptr(at))
		case b.Seg != any(seg) || b.Owner != pool.Pool(st.pool):
			return fmt.Errorf("block %#x: wrong Seg or Owner", uintptr(b.Ptr))
		case b.Size == 0 || b.Size%minBlock != 0:
			return fmt.Errorf("block %#x: size %d", uintptr(b.Ptr), b.Size)
		case b.Next != nil && b.Next.Prev != b:
			return fmt.Errorf("block %#x: broken links", uintptr(b.Ptr))
		case b.Free && b.Next != nil && b.Next.Free:
			return fmt.Errorf("blocks %#x and %#x: free neighbours not merged", uintptr(b.Ptr), uintptr(b.Next.Ptr))
		case b.Free && !inFreeSet(&h.free, b):
			return fmt.Errorf("free block %#x: not in the free set", uintptr(b.Ptr))
		case !b.Free && !seg.backed(b.Ptr, b.Size):
			return fmt.Errorf("live block %#x: not all mapped", uintptr(b.Ptr))
		}
		if !b.Free {
			live++
		}
		if b.Next == nil && b != seg.last {
			return fmt.Errorf("segment %#x: last is not the last block", uintptr(seg.base))
		}
		at += backend.Ptr(b.Size)
	}
	if at != seg.base+backend.Ptr(seg.size) {
		return fmt.Errorf("segment %#x: blocks end at %#x, segment at %#x", uintptr(seg.base), uintptr(at), uintptr(seg.base)+uintptr(seg.size))
	}
	if live != seg.live {
		return fmt.Errorf("segment %#x: %d live blocks, counted %d", uintptr(seg.base), live, seg.live)
	}
	if seg.virtual {
		mapped := 0
		for i := range seg.granules {
			if g := seg.granules[i]; g != 0 {
				mapped++
				if c := seg.chunkAt(uint64(i)); i < int(c.head) || i >= int(c.head+c.n) || seg.granules[c.head] != g {
					return fmt.Errorf("segment %#x: granule %d outside its chunk", uintptr(seg.base), i)
				}
			}
		}
		if mapped != seg.mapped || (len(seg.granules) > 0 && seg.granules[len(seg.granules)-1] == 0) {
			return fmt.Errorf("segment %#x: %d granules mapped, counted %d", uintptr(seg.base), mapped, seg.mapped)
		}
	}
	return nil
}

func inFreeSet(f *freeSet, b *pool.Block) bool {
	c := f.classes[classOf(b.Size)]
	i := search(c, b.Size, uint64(b.Ptr))
	return i < len(c) && c[i] == b
}

// Random allocations, frees (on the owner's stream and others), reclaims
// and a hard limit keep the structure consistent, on both kinds of memory.
func TestRandomOperationsKeepTheStructureConsistent(t *testing.T) {
	dev := pooltest.Device(t)
	for _, tc := range []struct {
		name   string
		dev    backend.Device
		limits pool.Limits
	}{
		{"virtual", dev, pool.Limits{Hard: 512 * miB, Soft: 384 * miB}},
		{"virtual without soft limit", dev, pool.Limits{Hard: 768 * miB}},
		{"ordinary", plainDevice{dev}, pool.Limits{Hard: 512 * miB, Soft: 384 * miB}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := pool.NewSource(tc.dev, tc.limits)
			require.NoError(t, err)
			p, err := newPool(tc.dev, src, defaultConfig)
			require.NoError(t, err)
			streams := []backend.Stream{pooltest.NewStream(t, dev), pooltest.NewStream(t, dev), nil}
			rng := rand.New(rand.NewPCG(11, 12))
			var live []*pool.Block
			var allocs, ooms int
			for i := range 4000 {
				switch op := rng.IntN(10); {
				case op < 5:
					size := uint64(1) << rng.IntN(27)
					size += rng.Uint64N(size)
					b, err := p.Alloc(size, streams[rng.IntN(len(streams))])
					if err != nil {
						require.True(t, errors.Is(err, backend.ErrOutOfMemory), "op %d: %v", i, err)
						ooms++
						break
					}
					allocs++
					live = append(live, b)
				case op < 9 && len(live) > 0:
					j := rng.IntN(len(live))
					s := live[j].Stream
					if rng.IntN(4) == 0 {
						s = streams[rng.IntN(len(streams))]
					}
					require.NoError(t, p.Free(live[j], s), "op %d", i)
					live[j] = live[len(live)-1]
					live = live[:len(live)-1]
				case op == 9:
					p.Reclaim(rng.Uint64N(64 * miB))
				}
				require.NoError(t, checkInvariants(p), "after op %d", i)
			}
			st := p.Stats()
			t.Logf("%d allocs, %d out of memory, %d trims, reclaimed %d MiB, peak reserved %d MiB",
				allocs, ooms, p.trims.Load(), st.Reclaimed>>20, st.ReservedPeak>>20)
			require.NotZero(t, ooms, "the hard limit was reached")
			for _, b := range live {
				require.NoError(t, p.Free(b, b.Stream))
			}
			require.NoError(t, p.Close())
			require.NoError(t, checkInvariants(p))
			require.Zero(t, src.Reserved())
		})
	}
}

// Goroutines on their own streams allocate, write, check and free while
// another reclaims at random and the hard limit forces retries: no block
// is handed to two owners, and no live block is unmapped under its owner.
func TestConcurrentReclaimLeavesLiveBlocksAlone(t *testing.T) {
	dev := pooltest.Device(t)
	for _, tc := range []struct {
		name string
		dev  backend.Device
	}{{"virtual", dev}, {"ordinary", plainDevice{dev}}} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := pool.NewSource(tc.dev, pool.Limits{Hard: 256 * miB})
			require.NoError(t, err)
			p, err := newPool(tc.dev, src, defaultConfig)
			require.NoError(t, err)
			const workers, ops = 4, 300
			errs := make(chan error, workers)
			stop, stopped := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(stopped)
				rng := rand.New(rand.NewPCG(5, 5))
				for {
					select {
					case <-stop:
						return
					default:
						p.Reclaim(rng.Uint64N(32 * miB))
					}
				}
			}()
			for w := range workers {
				s := pooltest.NewStream(t, dev)
				go func() { errs <- worker(p, dev, s, w, ops) }()
			}
			for range workers {
				require.NoError(t, <-errs)
			}
			close(stop)
			<-stopped
			require.NoError(t, checkInvariants(p))
			require.NoError(t, p.Close())
			require.Zero(t, src.Reserved())
		})
	}
}

func worker(p *Pool, dev backend.Device, s backend.Stream, w, ops int) error {
	rng := rand.New(rand.NewPCG(uint64(w), 9))
	type held struct {
		b *pool.Block
		v byte
	}
	var live []held
	check := func(h held) error {
		n := min(h.b.Requested, 64<<10)
		got := make([]byte, n)
		if err := dev.CopyDtoH(unsafe.Pointer(&got[0]), h.b.Ptr, n, s); err != nil {
			return err
		}
		for i, c := range got {
			if c != h.v {
				return fmt.Errorf("worker %d: block %#x byte %d is %#x, want %#x", w, uintptr(h.b.Ptr), i, c, h.v)
			}
		}
		return p.Free(h.b, s)
	}
	for i := range ops {
		if len(live) > 3 || (len(live) > 0 && rng.IntN(2) == 0) {
			j := rng.IntN(len(live))
			if err := check(live[j]); err != nil {
				return err
			}
			live = append(live[:j], live[j+1:]...)
		}
		size := uint64(1) << rng.IntN(25)
		size += rng.Uint64N(size)
		b, err := p.Alloc(size, s)
		if errors.Is(err, backend.ErrOutOfMemory) {
			continue
		}
		if err != nil {
			return err
		}
		v := byte(w<<5 | i&31)
		if err := dev.Memset8(b.Ptr, v, min(size, 64<<10), s); err != nil {
			return err
		}
		live = append(live, held{b, v})
	}
	for _, h := range live {
		if err := check(h); err != nil {
			return err
		}
	}
	return nil
}
