package host

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzShadowMatchesAByteModel drives the shadow with random accesses and
// frees over a small address range and compares every check with a model
// that keeps each byte's last write and reads (newest per stream) in a
// plain array. It also checks the shadow's invariants: segments sorted,
// disjoint, non-empty, holding some access, and merged where equal.
func FuzzShadowMatchesAByteModel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{0x81, 3, 40, 2, 0x02, 10, 10, 5, 0xC3, 0, 64, 1, 0x41, 20, 8, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const size, streams = 64, 3
		type cell struct {
			write *access
			reads [streams]*access
		}
		var model [size]cell
		var sh shadow
		clocks := make([]vclock, streams)
		epochs := make([]uint64, streams)
		for len(ops) >= 4 {
			kind, lo, n, other := ops[0], int(ops[1]%size), int(ops[2]%16)+1, ops[3]
			ops = ops[4:]
			hi := min(lo+n, size)
			st := int(kind % streams)
			switch {
			case kind&0xC0 == 0xC0: // free
				sh.clear(uintptr(lo), uintptr(hi))
				for i := lo; i < hi; i++ {
					model[i] = cell{}
				}
			case kind&0xC0 == 0x80: // st waits for another stream's work so far
				clocks[st].join(clocks[int(other)%streams])
			default:
				epochs[st]++
				clocks[st].set(st, epochs[st])
				op := &opRec{slot: st, epoch: epochs[st]}
				a := &access{op: op, lo: uintptr(lo), hi: uintptr(hi), write: kind&0x40 != 0}
				got := sh.check(a, clocks[st], nil)
				unordered := func(e *access) bool { return e.op.slot != st && e.op.epoch > clocks[st].at(e.op.slot) }
				var want []*access
				for i := lo; i < hi; i++ {
					c := &model[i]
					if c.write != nil && unordered(c.write) && !slices.Contains(want, c.write) {
						want = append(want, c.write)
					}
					if a.write {
						for _, r := range c.reads {
							if r != nil && unordered(r) && !slices.Contains(want, r) {
								want = append(want, r)
							}
						}
					}
				}
				var gotE []*access
				for _, p := range got {
					gotE = append(gotE, p.earlier)
				}
				require.ElementsMatch(t, want, gotE, "races of %+v", *a)
				sh.record(a)
				for i := lo; i < hi; i++ {
					if a.write {
						model[i] = cell{write: a}
					} else {
						model[i].reads[st] = a
					}
				}
			}
			for i, s := range sh.segs {
				require.Less(t, s.lo, s.hi, "segment %d is empty", i)
				require.True(t, s.write != nil || len(s.reads) > 0, "segment %d holds nothing", i)
				if i > 0 {
					p := sh.segs[i-1]
					require.LessOrEqual(t, p.hi, s.lo, "segments %d and %d overlap", i-1, i)
					require.False(t, p.hi == s.lo && p.write == s.write && slices.Equal(p.reads, s.reads),
						"segments %d and %d are equal and not merged", i-1, i)
				}
			}
		}
	})
}
