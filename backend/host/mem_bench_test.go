package host_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
)

// The memory benchmarks run on whichever path the build selects: compare
// `go test -bench Mem` with and without -tags gocuda_portablemem
// (docs/benchmarks.md has the table).

var memSizes = []uint64{4 << 10, 2 << 20, 64 << 20}

// BenchmarkMemAllocFree is one Alloc and Free of untouched memory.
func BenchmarkMemAllocFree(b *testing.B) {
	for _, size := range memSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			d := device(b, host.Options{})
			for b.Loop() {
				p, err := d.Alloc(size)
				require.NoError(b, err)
				require.NoError(b, d.Free(p))
			}
		})
	}
}

// BenchmarkMemMapUnmap is the virtual memory calls a pool makes, on 2 MiB
// and 32 MiB handles whose bytes were written:
//   - grow: CreatePhysical, Map, Unmap, ReleasePhysical (pool/split's
//     order when it trims);
//   - release-first: the same with ReleasePhysical before Unmap;
//   - move: Unmap a live handle and Map it at another address.
func BenchmarkMemMapUnmap(b *testing.B) {
	for _, size := range []uint64{2 << 20, 32 << 20} {
		setup := func(b *testing.B) (*host.Device, *host.Stream, backend.Ptr) {
			d := device(b, host.Options{TotalMemory: 1 << 30})
			va, err := d.Reserve(2 * size)
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, d.ReleaseAddress(va, 2*size)) })
			return d, newStream(b, d), va
		}
		write := func(b *testing.B, d *host.Device, s *host.Stream, va backend.Ptr) {
			require.NoError(b, d.Memset8(va, 1, size, s))
			require.NoError(b, s.Synchronize())
		}
		b.Run("grow/"+sizeName(size), func(b *testing.B) {
			d, s, va := setup(b)
			for b.Loop() {
				m, err := d.CreatePhysical(size)
				require.NoError(b, err)
				require.NoError(b, d.Map(va, size, m))
				write(b, d, s, va)
				require.NoError(b, d.Unmap(va, size))
				require.NoError(b, d.ReleasePhysical(m))
			}
		})
		b.Run("release-first/"+sizeName(size), func(b *testing.B) {
			d, s, va := setup(b)
			for b.Loop() {
				m, err := d.CreatePhysical(size)
				require.NoError(b, err)
				require.NoError(b, d.Map(va, size, m))
				write(b, d, s, va)
				require.NoError(b, d.ReleasePhysical(m))
				require.NoError(b, d.Unmap(va, size))
			}
		})
		b.Run("move/"+sizeName(size), func(b *testing.B) {
			d, s, va := setup(b)
			m, err := d.CreatePhysical(size)
			require.NoError(b, err)
			require.NoError(b, d.Map(va, size, m))
			write(b, d, s, va)
			at := va
			for b.Loop() {
				require.NoError(b, d.Unmap(at, size))
				at = va + backend.Ptr(size) - (at - va) // the other half
				require.NoError(b, d.Map(at, size, m))
			}
			require.NoError(b, d.Unmap(at, size))
			require.NoError(b, d.ReleasePhysical(m))
		})
	}
}

// BenchmarkMemCopy is each copy between memory already touched, which both
// paths should do at memmove speed.
func BenchmarkMemCopy(b *testing.B) {
	for _, size := range []uint64{1 << 20, 64 << 20} {
		d := device(b, host.Options{})
		s := newStream(b, d)
		src, err := d.Alloc(size)
		require.NoError(b, err)
		dst, err := d.Alloc(size)
		require.NoError(b, err)
		hostBuf := make([]byte, size)
		require.NoError(b, d.Memset8(src, 1, size, s))
		require.NoError(b, d.Memset8(dst, 2, size, s))
		require.NoError(b, s.Synchronize())
		// Each copy is waited for, so that the time is the copy's, not
		// the queueing's.
		ops := []struct {
			name string
			op   func() error
		}{
			{"HtoD", func() error { return d.CopyHtoD(dst, unsafe.Pointer(&hostBuf[0]), size, s) }},
			{"DtoH", func() error { return d.CopyDtoH(unsafe.Pointer(&hostBuf[0]), src, size, s) }},
			{"DtoD", func() error { return d.CopyDtoD(dst, src, size, s) }},
		}
		for _, o := range ops {
			b.Run(o.name+"/"+sizeName(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					require.NoError(b, o.op())
					require.NoError(b, s.Synchronize())
				}
			})
		}
		require.NoError(b, d.Free(src))
		require.NoError(b, d.Free(dst))
	}
}

func sizeName(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	default:
		return fmt.Sprintf("%dKiB", n>>10)
	}
}
