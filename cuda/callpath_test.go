//go:build cgo && (linux || darwin || freebsd)

package cuda

import (
	"go/version"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type callPathFunc struct {
	name string
	call func(fn unsafe.Pointer, c, a, b uintptr) (Result, uint64)
}

// paths are the ways this build can run a gc_fast_ function: plain cgo
// always, and the linkname fast path where the build has it.
func paths() []callPathFunc {
	ps := []callPathFunc{{"cgo", fastCgo}}
	if callPath != "cgo" {
		ps = append(ps, callPathFunc{"linkname", fast})
	}
	return ps
}

func TestFastCallsCarryArgumentsAndResultOnEveryPath(t *testing.T) {
	for _, p := range paths() {
		for _, tc := range []struct{ a, b uintptr }{{0, 0}, {3, 4}, {1 << 40, 1<<40 + 1}, {^uintptr(0) >> 1, 1}} {
			x, v := p.call(fastSum, 0, tc.a, tc.b)
			assert.Equal(t, Result(0), x, "path %s", p.name)
			assert.Equal(t, uint64(tc.a+tc.b), v, "path %s: %d+%d", p.name, tc.a, tc.b)
		}
	}
}

func TestCallPathIsLinknameOnlyOnVerifiedGoWithoutTheTag(t *testing.T) {
	lang := version.Lang(runtime.Version())
	if lang == "" {
		t.Skipf("Go version %q is not a release: its build tags decide", runtime.Version())
	}
	want := "cgo"
	if lang == "go1.26" && !tagNoLinkname {
		want = "linkname asmcgocall"
	}
	assert.Equal(t, want, CallPath(), "Go %s, gocuda_nolinkname %v", runtime.Version(), tagNoLinkname)
}

// BenchmarkCallPath times the cheap driver calls on each call path of this
// build, in one run: path=cgo always, path=linkname unless the build has
// only the fallback. call=sum is the path alone (no driver: it runs on any
// machine); the driver calls need a GPU. Build with and without
// -tags gocuda_nolinkname to check that the fallback binary's path=cgo
// matches this one's.
func BenchmarkCallPath(b *testing.B) {
	type call struct {
		name    string
		fn      unsafe.Pointer
		c, x, y uintptr
	}
	calls := []call{{name: "sum", fn: fastSum, x: 1, y: 2}}
	if err := Init(); err == nil {
		d, err := GetDevice(0)
		require.NoError(b, err)
		c, err := d.PrimaryContext()
		require.NoError(b, err)
		s, err := c.NewStream(StreamNonBlocking)
		require.NoError(b, err)
		defer s.Destroy()
		ev, err := c.NewEvent(EventDisableTiming)
		require.NoError(b, err)
		defer ev.Destroy()
		require.NoError(b, ev.Record(s))
		require.NoError(b, s.Synchronize())
		calls = append(calls,
			call{"cuCtxGetDevice", fastCtxGetDevice, c.h, 0, 0},
			call{"cuStreamQuery", fastStreamQuery, c.h, s.h, 0},
			call{"cuEventQuery", fastEventQuery, c.h, ev.h, 0})
	} else {
		b.Logf("no driver (%v): only call=sum", err)
	}
	for _, p := range paths() {
		for _, k := range calls {
			b.Run("path="+p.name+"/call="+k.name, func(b *testing.B) {
				for b.Loop() {
					if x, _ := p.call(k.fn, k.c, k.x, k.y); x != 0 {
						b.Fatal(newError(k.name, x))
					}
				}
			})
		}
	}
}
