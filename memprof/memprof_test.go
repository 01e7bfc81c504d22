package memprof_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"
)

// tracing turns leak tracing on for one test.
func tracing(t testing.TB) {
	t.Helper()
	memprof.Enable()
	t.Cleanup(memprof.Disable)
}

// leakArrays allocates n arrays of 1024 float32 and keeps them; it returns
// the file and line of the allocation, taken from the runtime so that the
// test does not depend on this file's layout.
func leakArrays(t testing.TB, n int) (arrays []*cuarray.Array[float32], file string, line int) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, file, line, _ = runtime.Caller(0)
		a, err := cuarray.New[float32](1024) // the leak: line+1 of the Caller above
		require.NoError(t, err)
		arrays = append(arrays, a)
	}
	return arrays, file, line + 1
}

// siteAt finds the live site whose first user frame is file:line.
func siteAt(file string, line int) (memprof.Site, bool) {
	for _, s := range memprof.Sites() {
		if u := s.UserFrames(); len(u) > 0 && u[0].File == file && u[0].Line == line && s.Live > 0 {
			return s, true
		}
	}
	return memprof.Site{}, false
}

func TestReportFindsADeliberateLeakAtItsFileAndLine(t *testing.T) {
	tracing(t)
	arrays, file, line := leakArrays(t, 3)

	s, ok := siteAt(file, line)
	require.True(t, ok, "no live site at %s:%d in %v", file, line, memprof.Sites())
	assert.Equal(t, uint64(3), s.Live)
	assert.Equal(t, uint64(3*4096), s.LiveRequested)
	assert.GreaterOrEqual(t, s.LiveBytes, s.LiveRequested)
	assert.GreaterOrEqual(t, s.Allocs, uint64(3))
	// The full stack still holds gocuda's own frames above the user's.
	assert.Greater(t, len(s.Frames()), len(s.UserFrames()))
	assert.Contains(t, s.Frames()[0].Function, "github.com/gocuda/gocuda/")

	var buf bytes.Buffer
	require.NoError(t, memprof.WriteReport(&buf, memprof.ReportOptions{}))
	report := buf.String()
	assert.Contains(t, report, "leak tracing on")
	// The first frame printed for the site is the leaking line itself,
	// after a note of the gocuda frames above it.
	at := fmt.Sprintf("%s:%d", file, line)
	want := fmt.Sprintf("allocated at\n    (%d gocuda frames above)\n    github.com/gocuda/gocuda/memprof_test.leakArrays\n        %s\n",
		len(s.Frames())-len(s.UserFrames()), at)
	assert.Contains(t, report, want)

	for _, a := range arrays {
		a.UnsafeFree()
	}
	_, ok = siteAt(file, line)
	assert.False(t, ok, "freed arrays are still reported")
	buf.Reset()
	require.NoError(t, memprof.WriteReport(&buf, memprof.ReportOptions{}))
	assert.NotContains(t, buf.String(), at)
}

func TestReportGroupsSitesLargestFirst(t *testing.T) {
	tracing(t)
	small, err := cuarray.New[uint8](4096)
	require.NoError(t, err)
	defer small.UnsafeFree()
	big, err := cuarray.New[uint8](1 << 20)
	require.NoError(t, err)
	defer big.UnsafeFree()
	sites := memprof.Sites()
	for i := 1; i < len(sites); i++ {
		assert.GreaterOrEqual(t, sites[i-1].LiveBytes, sites[i].LiveBytes, "sites out of order")
	}
}

func TestNothingIsRecordedWhileTracingIsOff(t *testing.T) {
	memprof.Disable()
	arrays, file, line := leakArrays(t, 2)
	defer func() {
		for _, a := range arrays {
			a.UnsafeFree()
		}
	}()
	_, ok := siteAt(file, line)
	assert.False(t, ok)
}

func TestBuffersTracedBeforeDisableStayUntilFreed(t *testing.T) {
	tracing(t)
	arrays, file, line := leakArrays(t, 2)
	memprof.Disable()
	_, ok := siteAt(file, line)
	assert.True(t, ok, "a buffer allocated while tracing vanished at Disable")
	for _, a := range arrays {
		a.UnsafeFree()
	}
	_, ok = siteAt(file, line)
	assert.False(t, ok, "a freed buffer stayed in the report after Disable")
}

// newPool makes a wrapped pool of strategy name on device 0 of the
// process's backend, closed at the end of the test.
func newPool(t testing.TB, name string) *memprof.Pool {
	t.Helper()
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	p, err := pool.New(name, dev, pool.Limits{})
	require.NoError(t, err)
	w := memprof.Wrap(p)
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	return w
}

func TestWrapperKeepsThePoolsBehaviour(t *testing.T) {
	tracing(t)
	for _, name := range pool.Registered() {
		t.Run(name, func(t *testing.T) {
			dev, err := gocuda.Device(0)
			require.NoError(t, err)
			if name == "cuda" && !dev.Info().MemoryPools {
				t.Skip("the device has no stream-ordered pools")
			}
			w := newPool(t, name)
			assert.Equal(t, name, w.Name())
			assert.Equal(t, name, w.Unwrap().Name())
			s, err := dev.NewStream()
			require.NoError(t, err)
			defer s.Destroy()
			var blocks []*pool.Block
			for _, size := range []uint64{1, 4096, 1 << 20} {
				b, err := w.Alloc(size, s)
				require.NoError(t, err)
				blocks = append(blocks, b)
			}
			assert.Equal(t, uint64(3), w.Stats().Allocs-w.Stats().Frees)
			for _, b := range blocks {
				require.NoError(t, w.Free(b, s))
			}
			_, err = w.Alloc(0, s)
			assert.Error(t, err, "size 0 must stay an error through the wrapper")
			for _, st := range memprof.Sites() {
				if st.Device == dev.Ordinal() && st.Live > 0 {
					for _, f := range st.Frames() {
						assert.NotContains(t, f.Function, "TestWrapperKeepsThePoolsBehaviour", "freed blocks still live in the report")
					}
				}
			}
		})
	}
}

func TestAllocatedCountsOnlyTheCallersAllocations(t *testing.T) {
	memprof.Disable() // Allocated must not need tracing
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	w := newPool(t, "split")
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Destroy()

	// Another goroutine allocates the whole time on its own stream.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s2, err := dev.NewStream()
		if !assert.NoError(t, err) {
			return
		}
		defer s2.Destroy()
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := w.Alloc(512, s2)
			if !assert.NoError(t, err) {
				return
			}
			assert.NoError(t, w.Free(b, s2))
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	var inner memprof.Allocation
	got := memprof.Allocated(func() {
		for _, size := range []uint64{1000, 3000} {
			b, err := w.Alloc(size, s)
			require.NoError(t, err)
			require.NoError(t, w.Free(b, s))
		}
		inner = memprof.Allocated(func() {
			a, err := cuarray.New[float64](100) // through gocuda.Pool
			require.NoError(t, err)
			a.UnsafeFree()
		})
	})
	assert.Equal(t, memprof.Allocation{Allocs: 1, Bytes: 800}, inner)
	assert.Equal(t, memprof.Allocation{Allocs: 3, Bytes: 4800}, got)
	assert.Equal(t, memprof.Allocation{}, memprof.Allocated(func() {}))
}

func TestProfileReadsBackWithTheLeakSite(t *testing.T) {
	tracing(t)
	arrays, file, line := leakArrays(t, 4)
	defer func() {
		for _, a := range arrays {
			a.UnsafeFree()
		}
	}()
	var buf bytes.Buffer
	require.NoError(t, memprof.WriteProfile(&buf))
	assert.Equal(t, []byte{0x1f, 0x8b}, buf.Bytes()[:2], "pprof expects gzip")
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())

	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	assert.Equal(t, []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}, types)
	assert.Equal(t, "inuse_space", p.DefaultSampleType)

	var found *profile.Sample
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				// Earlier tests left freed sites at the same line (with
				// other callers); this test's site is the live one.
				if l.Function.Filename == file && int(l.Line) == line && l.Function.Name == "github.com/gocuda/gocuda/memprof_test.leakArrays" && s.Value[2] > 0 {
					found = s
				}
			}
		}
	}
	require.NotNil(t, found, "no sample at %s:%d", file, line)
	assert.Equal(t, int64(4), found.Value[2], "inuse_objects")
	assert.GreaterOrEqual(t, found.Value[3], int64(4*4096), "inuse_space")
	assert.GreaterOrEqual(t, found.Value[0], found.Value[2], "alloc_objects >= inuse_objects")
	assert.GreaterOrEqual(t, found.Value[1], found.Value[3], "alloc_space >= inuse_space")
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprint(dev.Ordinal())}, found.Label["device"])
	assert.Equal(t, []string{"device"}, found.Label["memory"])
}

// Pinned and unified buffers are host memory the device addresses: their
// sites say which kind, in Sites, the report and the profile, so that a
// leak of pinned memory is not read as device memory held.
func TestSitesSayTheKindOfMemory(t *testing.T) {
	tracing(t)
	for _, c := range []struct {
		make func() (*cuarray.Array[float32], error)
		kind pool.Memory
		line string
	}{
		{func() (*cuarray.Array[float32], error) { return cuarray.New[float32](1024) }, pool.DeviceMemory, "on device 0, allocated at"},
		{func() (*cuarray.Array[float32], error) { return cuarray.NewPinned[float32](1024) }, pool.PinnedMemory, "on device 0 (pinned memory), allocated at"},
		{func() (*cuarray.Array[float32], error) { return cuarray.NewUnified[float32](1024) }, pool.UnifiedMemory, "on device 0 (unified memory), allocated at"},
	} {
		t.Run(c.kind.String(), func(t *testing.T) {
			_, file, line, _ := runtime.Caller(0)
			a, err := c.make() // the site: line+1 of the Caller above
			require.NoError(t, err)
			defer a.UnsafeFree()
			line++
			var site *memprof.Site
			for _, s := range memprof.Sites() {
				if u := s.UserFrames(); s.Live > 0 && len(u) > 1 && u[1].File == file && u[1].Line == line {
					site = &s
				}
			}
			require.NotNil(t, site, "no live site at %s:%d", file, line)
			assert.Equal(t, c.kind, site.Memory)

			var buf bytes.Buffer
			require.NoError(t, memprof.WriteReport(&buf, memprof.ReportOptions{}))
			// The site's heading, then its frames down to this test's line.
			at := fmt.Sprintf("%s:%d", file, line)
			i := strings.Index(buf.String(), at)
			require.GreaterOrEqual(t, i, 0, "the report does not show %s:\n%s", at, buf.String())
			head := buf.String()[:i]
			head = head[strings.LastIndex(head, "\n\n")+2:]
			assert.Contains(t, head, c.line)

			buf.Reset()
			require.NoError(t, memprof.WriteProfile(&buf))
			p, err := profile.Parse(&buf)
			require.NoError(t, err)
			var labels []string
			for _, smp := range p.Sample {
				for _, loc := range smp.Location {
					for _, l := range loc.Line {
						if l.Function.Filename == file && int(l.Line) == line && smp.Value[2] > 0 {
							labels = append(labels, smp.Label["memory"]...)
						}
					}
				}
			}
			assert.Equal(t, []string{c.kind.String()}, labels)
		})
	}
}

func TestAllocatedOnTwoGoroutinesAtOnceKeepsTheirCountsApart(t *testing.T) {
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	w := newPool(t, "split")
	var wg sync.WaitGroup
	got := make([]memprof.Allocation, 2)
	start := make(chan struct{})
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := dev.NewStream()
			if !assert.NoError(t, err) {
				return
			}
			defer s.Destroy()
			got[g] = memprof.Allocated(func() {
				<-start // both calls are open before either allocates
				for i := 0; i <= g; i++ {
					b, err := w.Alloc(uint64(1000*(g+1)), s)
					if assert.NoError(t, err) {
						assert.NoError(t, w.Free(b, s))
					}
				}
			})
		}()
	}
	close(start)
	wg.Wait()
	assert.Equal(t, memprof.Allocation{Allocs: 1, Bytes: 1000}, got[0])
	assert.Equal(t, memprof.Allocation{Allocs: 2, Bytes: 4000}, got[1])
}

// FuzzWrapperKeepsRecordsExact runs allocations, frees and tracing
// switches in the order the input says, and checks after each step that
// the report holds exactly the live blocks allocated while tracing was on.
func FuzzWrapperKeepsRecordsExact(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{3, 0, 0, 2, 3, 1, 1, 1, 0, 2})
	f.Add([]byte{0, 0, 0, 0, 1, 1, 1, 1})
	dev, err := gocuda.Device(0)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, ops []byte) {
		defer memprof.Disable()
		memprof.Enable()
		w := newPool(t, "binned")
		s, err := dev.NewStream()
		require.NoError(t, err)
		defer s.Destroy()
		type live struct {
			b      *pool.Block
			traced bool
		}
		var blocks []live
		for i, op := range ops {
			switch op % 4 {
			case 0, 1: // allocate, sizes from 1 B to about 16 KiB
				b, err := w.Alloc(uint64(op)*64+1, s)
				require.NoError(t, err)
				blocks = append(blocks, live{b, memprof.Enabled()})
			case 2: // free the block the next byte picks
				if len(blocks) == 0 {
					continue
				}
				j := i % len(blocks)
				if i+1 < len(ops) {
					j = int(ops[i+1]) % len(blocks)
				}
				require.NoError(t, w.Free(blocks[j].b, s))
				blocks = append(blocks[:j], blocks[j+1:]...)
			case 3:
				if memprof.Enabled() {
					memprof.Disable()
				} else {
					memprof.Enable()
				}
			}
			var want, wantBytes uint64
			for _, l := range blocks {
				if l.traced {
					want++
					wantBytes += l.b.Size
				}
			}
			var n, bytes uint64
			for _, st := range memprof.Sites() {
				for _, fr := range st.Frames() {
					if strings.Contains(fr.Function, "FuzzWrapperKeepsRecordsExact") {
						n += st.Live
						bytes += st.LiveBytes
						break
					}
				}
			}
			require.Equal(t, want, n, "live traced blocks after op %d", i)
			require.Equal(t, wantBytes, bytes, "live traced bytes after op %d", i)
		}
		for _, l := range blocks {
			require.NoError(t, w.Free(l.b, s))
		}
	})
}

// leaksKnobChild is set in the environment of the process that
// TestLeaksKnobIsReadAtTheFirstWrapNotAtImport starts: the knob is read
// once per process.
const leaksKnobChild = "GOCUDA_TEST_LEAKS_KNOB_CHILD"

func TestLeaksKnobChild(t *testing.T) {
	if os.Getenv(leaksKnobChild) == "" {
		t.Skip("runs as TestLeaksKnobIsReadAtTheFirstWrapNotAtImport's child process")
	}
	require.False(t, memprof.Enabled(), "the knob is set, but nothing was wrapped yet")
	switch os.Getenv(leaksKnobChild) {
	case "setenv":
		// Set after import: read at the first Wrap all the same.
		t.Setenv(config.EnvDebug, "leaks")
	case "disable":
		// An explicit Disable before the first Wrap wins over the knob.
		memprof.Disable()
	}
	newPool(t, "simple")
	fmt.Println("enabled:", memprof.Enabled())
}

func TestLeaksKnobIsReadAtTheFirstWrapNotAtImport(t *testing.T) {
	for _, tc := range []struct {
		child, debug string
		enabled      bool
	}{
		{"setenv", "", true},
		{"start", "leaks", true},
		{"disable", "leaks", false},
		{"start", "log", false},
	} {
		t.Run(tc.child+"/"+tc.debug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLeaksKnobChild$", "-test.v")
			cmd.Env = append(os.Environ(), leaksKnobChild+"="+tc.child, config.EnvDebug+"="+tc.debug)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child:\n%s", out)
			require.Contains(t, string(out), "--- PASS: TestLeaksKnobChild")
			assert.Contains(t, string(out), fmt.Sprintf("enabled: %t", tc.enabled))
		})
	}
}
