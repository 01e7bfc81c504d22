package gcpressure_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// BenchmarkAllocFree is a cached Alloc+Free pair far from the limit, on
// the bare pool and through the pressure layer (early GC on), for each
// strategy the backend runs.
func BenchmarkAllocFree(b *testing.B) {
	for _, name := range strategies {
		bare, wrapped := benchPools(b, name)
		s := pooltest.NewStream(b, bare.Device())
		for _, c := range []struct {
			label string
			p     pool.Pool
		}{{"bare", bare}, {"gcpressure", wrapped}} {
			b.Run(name+"/"+c.label, func(b *testing.B) {
				for b.Loop() {
					pairOn(b, c.p, s)
				}
			})
		}
	}
}

// BenchmarkOverhead runs the bare and the wrapped pool in alternating
// rounds in one run, so that clock and cache state are the same for both,
// and reports what the layer adds to a cached pair (extra-ns) and the
// ratio of the two (the target: at most 5 ns extra).
func BenchmarkOverhead(b *testing.B) {
	bare, wrapped := benchPools(b, "split")
	s := pooltest.NewStream(b, bare.Device())
	const round = 1024
	var tBare, tWrapped time.Duration
	n := 0
	// b.N counts pairs on each pool, in rounds.
	for n < b.N {
		t0 := time.Now()
		for range round {
			pairOn(b, bare, s)
		}
		t1 := time.Now()
		for range round {
			pairOn(b, wrapped, s)
		}
		tBare += t1.Sub(t0)
		tWrapped += time.Since(t1)
		n += round
	}
	b.StopTimer()
	nsBare := float64(tBare.Nanoseconds()) / float64(n)
	nsWrapped := float64(tWrapped.Nanoseconds()) / float64(n)
	b.ReportMetric(nsBare, "bare-ns/pair")
	b.ReportMetric(nsWrapped, "wrapped-ns/pair")
	b.ReportMetric(nsWrapped-nsBare, "extra-ns/pair")
	b.ReportMetric(nsWrapped/nsBare, "ratio")
}

func benchPools(b *testing.B, name string) (bare pool.Pool, wrapped *gcpressure.Pool) {
	b.Helper()
	dev := pooltest.Device(b)
	var err error
	bare, err = pool.New(name, dev, pool.Limits{})
	if err != nil {
		b.Skipf("%s: %v", name, err)
	}
	inner, err := pool.New(name, dev, pool.Limits{})
	require.NoError(b, err)
	wrapped, err = gcpressure.Wrap(inner, gcpressure.Options{Early: true})
	require.NoError(b, err)
	b.Cleanup(func() { _ = bare.Close(); _ = wrapped.Close() })
	return bare, wrapped
}

func pairOn(b *testing.B, p pool.Pool, s backend.Stream) {
	blk, err := p.Alloc(4096, s)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Free(blk, s); err != nil {
		b.Fatal(err)
	}
}
