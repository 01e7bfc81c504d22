package memprof

import (
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Site is one allocation stack on one device, in one kind of memory, and
// what it holds.
type Site struct {
	Device int
	// Memory is the kind of memory the site's buffers are: the device's
	// own, or pinned or unified memory made through it.
	Memory pool.Memory
	// Stack is the full stack of program counters that allocated,
	// innermost first, starting at the pool's caller (gocuda's own frames
	// included; see UserFrames).
	Stack []uintptr
	// Live is how many buffers from this site are still allocated;
	// LiveBytes their block sizes (device memory held, as the pool's
	// Live counts it) and LiveRequested what their callers asked for.
	Live, LiveBytes, LiveRequested uint64
	// Allocs and AllocBytes count every allocation from this site while
	// tracing was on, freed or not.
	Allocs, AllocBytes uint64
}

// Frames returns the site's whole stack, inlined calls expanded.
func (s Site) Frames() []runtime.Frame {
	var out []runtime.Frame
	fr := runtime.CallersFrames(s.Stack)
	for {
		f, more := fr.Next()
		if f.Function != "" || f.File != "" {
			out = append(out, f)
		}
		if !more {
			return out
		}
	}
}

// UserFrames returns the stack from the first frame outside gocuda's
// library packages: the line in the user's program that allocated (a
// cuarray.New, say), then its callers. Frames of gocuda's tests, examples
// and commands count as the user's. A stack entirely inside gocuda is
// returned whole.
func (s Site) UserFrames() []runtime.Frame {
	all := s.Frames()
	for i, f := range all {
		if !internal(f) {
			return all[i:]
		}
	}
	return all
}

// module is gocuda's module path, from this package's own import path, so
// that a fork under another path still tells its frames from the user's.
var module = strings.TrimSuffix(reflect.TypeFor[Site]().PkgPath(), "/memprof")

// internal reports whether f is in one of gocuda's library packages.
func internal(f runtime.Frame) bool {
	fn := f.Function
	if !strings.HasPrefix(fn, module+".") && !strings.HasPrefix(fn, module+"/") {
		return false
	}
	if strings.HasSuffix(f.File, "_test.go") {
		return false
	}
	rest := strings.TrimPrefix(fn, module+"/")
	return !strings.HasPrefix(rest, "examples/") && !strings.HasPrefix(rest, "cmd/")
}

// ReportOptions shape WriteReport's text.
type ReportOptions struct {
	// AllFrames prints each stack whole, gocuda's own frames included,
	// instead of from the user's frame.
	AllFrames bool
	// Depth is how many frames to print per site; 0 means 8.
	Depth int
	// MaxSites is how many sites to print, largest first; 0 means all.
	MaxSites int
}

// WriteReport writes the live buffers grouped by allocation site, most
// bytes first, each with its stack as func and file:line lines. It says
// so when tracing is off and when nothing is live.
func WriteReport(w io.Writer, o ReportOptions) error {
	if o.Depth <= 0 {
		o.Depth = 8
	}
	var live []Site
	var n, bytes uint64
	for _, s := range Sites() {
		if s.Live > 0 {
			live = append(live, s)
			n += s.Live
			bytes += s.LiveBytes
		}
	}
	ew := &errWriter{w: w}
	state := "on"
	if !Enabled() {
		state = "off (GOCUDA_DEBUG=leaks or memprof.Enable() turns it on)"
	}
	fmt.Fprintf(ew, "Live device memory by allocation site, leak tracing %s\n", state)
	fmt.Fprintf(ew, "%s, %s (%d bytes) at %s\n", plural(n, "buffer"), humanize.IBytes(bytes), bytes, plural(uint64(len(live)), "site"))
	for i, s := range live {
		if o.MaxSites > 0 && i == o.MaxSites {
			fmt.Fprintf(ew, "\n... %s\n", plural(uint64(len(live)-i), "more site"))
			break
		}
		kind := ""
		if s.Memory != pool.DeviceMemory {
			kind = fmt.Sprintf(" (%s memory)", s.Memory)
		}
		fmt.Fprintf(ew, "\n%s in %s (%s requested) on device %d%s, allocated at\n",
			humanize.IBytes(s.LiveBytes), plural(s.Live, "buffer"), humanize.IBytes(s.LiveRequested), s.Device, kind)
		frames := s.Frames()
		if !o.AllFrames {
			user := s.UserFrames()
			if skipped := len(frames) - len(user); skipped > 0 {
				fmt.Fprintf(ew, "    (%d gocuda frames above)\n", skipped)
			}
			frames = user
		}
		for j, f := range frames {
			if j == o.Depth {
				fmt.Fprintf(ew, "    ... %s\n", plural(uint64(len(frames)-j), "more frame"))
				break
			}
			fmt.Fprintf(ew, "    %s\n        %s:%d\n", f.Function, f.File, f.Line)
		}
	}
	return ew.err
}

// errWriter keeps the first write error so that a report is one error
// check, not one per line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// AllocSite returns the user's frame that allocated the live traced block
// at p on device (see UserFrames), for messages about a buffer such as
// cuarray's use-after-free errors. It reports false when tracing did not
// record the block.
func AllocSite(device int, p backend.Ptr) (runtime.Frame, bool) {
	registry.Lock()
	pools := append([]*Pool(nil), registry.pools...)
	registry.Unlock()
	for _, w := range pools {
		if w.dev != device || w.records.Load() == 0 {
			continue
		}
		w.mu.Lock()
		r, ok := w.live[p]
		var st stackKey
		if ok {
			st = r.site.stack
		}
		w.mu.Unlock()
		if ok {
			return firstUserFrame(st[:])
		}
	}
	return runtime.Frame{}, false
}

// CallerSite returns the first frame outside gocuda's library packages
// among the callers of its caller, skipping skip more frames: where a user
// called into gocuda.
func CallerSite(skip int) (runtime.Frame, bool) {
	var pcs stackKey
	n := runtime.Callers(skip+2, pcs[:])
	return firstUserFrame(pcs[:n])
}

func firstUserFrame(pcs []uintptr) (runtime.Frame, bool) {
	fs := Site{Stack: trimZeros(pcs)}.UserFrames()
	if len(fs) == 0 {
		return runtime.Frame{}, false
	}
	return fs[0], true
}

func trimZeros(pcs []uintptr) []uintptr {
	for i, pc := range pcs {
		if pc == 0 {
			return pcs[:i]
		}
	}
	return pcs
}
