package cuda_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

// BenchmarkDriverCall measures one cheap driver call through our binding
// (cuStreamQuery on an idle stream, context made current in the same C
// call) against two anchors from the same run: a bare cgo call, and a raw
// cgo call into cuCtxGetCurrent through the dlopen'd pointer.
func BenchmarkDriverCall(b *testing.B) {
	c := gpu(b)
	s, err := c.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Destroy()
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.Run("anchor=cgo-noop", func(b *testing.B) {
		for b.Loop() {
			cuda.NoopCall()
		}
	})
	b.Run("anchor=raw-cuCtxGetCurrent", func(b *testing.B) {
		for b.Loop() {
			if _, err := cuda.RawCtxGetCurrent(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("StreamQuery", func(b *testing.B) {
		for b.Loop() {
			if ok, err := s.Query(); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("StreamQuery-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Query(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
