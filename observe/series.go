package observe

import (
	"fmt"
)

// Sample is live and reserved bytes at one x: nanoseconds since a
// Timeline started, or an event's index in a replayed trace. A sample that
// stands for several (see Series) holds their first X and the largest Live
// and Reserved among them.
type Sample struct {
	X        int64
	Live     uint64
	Reserved uint64
}

// DefaultCapacity is the samples a Series keeps when asked for 0: at 24
// bytes a sample, 96 KiB a device, and more points than an 8-inch plot
// can show apart.
const DefaultCapacity = 4096

// minCapacity keeps a Series able to merge pairs and still show a shape.
const minCapacity = 2

// Series is a bounded record of live and reserved bytes against an
// increasing x, in fixed memory: Capacity samples, allocated once.
//
// When it is full it downsamples rather than dropping the oldest samples:
// neighbours are merged in pairs, each merged sample keeping the larger
// live and reserved bytes of the two, and from then on every stored sample
// stands for twice as many added ones (Stride). A memory timeline is read
// for the peak and for the shape of a whole run (the peak often comes
// early: loading a model, the first step), so a record that forgot the
// start would hide what users look for, while one that keeps maxima never
// hides a peak, whatever the run's length. The price is resolution: after
// n additions to a Series of capacity c, a sample covers up to 2n/c of
// them.
//
// A Series is not safe for concurrent use; Timeline locks around its own.
type Series struct {
	samples []Sample // len ≤ cap(samples) = capacity, never reallocated
	stride  int      // added samples each stored one stands for: 1, 2, 4, …
	pending Sample   // the bucket being filled while stride > 1
	npend   int      // added samples in pending
	added   uint64
}

// NewSeries returns a Series that keeps at most capacity samples; 0 means
// DefaultCapacity. An odd capacity is rounded up to even, because samples
// are merged in pairs.
func NewSeries(capacity int) (*Series, error) {
	if capacity == 0 {
		capacity = DefaultCapacity
	}
	if capacity < minCapacity {
		return nil, fmt.Errorf("observe: capacity %d: need at least %d samples, or 0 for the default %d", capacity, minCapacity, DefaultCapacity)
	}
	capacity += capacity & 1
	return &Series{samples: make([]Sample, 0, capacity), stride: 1}, nil
}

// Capacity is the most samples the Series holds.
func (s *Series) Capacity() int { return cap(s.samples) }

// Stride is how many added samples each stored sample stands for.
func (s *Series) Stride() int { return s.stride }

// Added counts every Add since the Series was made.
func (s *Series) Added() uint64 { return s.added }

// Add records live and reserved bytes at x. x should not decrease; the
// Series keeps samples in the order they were added.
func (s *Series) Add(x int64, live, reserved uint64) {
	s.added++
	if s.stride == 1 {
		if len(s.samples) == cap(s.samples) {
			s.compact()
		} else {
			s.samples = append(s.samples, Sample{x, live, reserved})
			return
		}
	}
	// Downsampling: fold into the bucket until it stands for stride samples.
	if s.npend == 0 {
		s.pending = Sample{x, live, reserved}
	} else {
		s.pending = merge(s.pending, Sample{x, live, reserved})
	}
	s.npend++
	if s.npend < s.stride {
		return
	}
	if len(s.samples) == cap(s.samples) {
		// compact keeps the pending bucket's count in step with the new
		// stride: a full bucket at the old stride is half of a new one.
		s.compact()
		if s.npend < s.stride {
			return
		}
	}
	s.samples = append(s.samples, s.pending)
	s.npend = 0
}

// compact merges stored samples in pairs, halving them, and doubles the
// stride. The pending bucket is kept (it now stands for half a stride, or
// a full one that Add stores).
func (s *Series) compact() {
	n := len(s.samples) / 2
	for i := range n {
		s.samples[i] = merge(s.samples[2*i], s.samples[2*i+1])
	}
	s.samples = s.samples[:n]
	s.stride *= 2
}

// merge is the sample that stands for a then b: a's x, the larger bytes.
func merge(a, b Sample) Sample {
	return Sample{X: a.X, Live: max(a.Live, b.Live), Reserved: max(a.Reserved, b.Reserved)}
}

// Samples returns a copy of the samples in the order added, including a
// bucket still being filled.
func (s *Series) Samples() []Sample {
	out := make([]Sample, len(s.samples), len(s.samples)+1)
	copy(out, s.samples)
	if s.npend > 0 {
		out = append(out, s.pending)
	}
	return out
}
