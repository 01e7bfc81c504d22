package memprof

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/google/pprof/profile"
)

// Profile returns the live device memory by allocation stack as a pprof
// profile, with the sample types of Go's heap profile: alloc_objects and
// alloc_space (every traced allocation), inuse_objects and inuse_space
// (those still live, the default view). Each sample carries the device
// ordinal as the label "device", so "go tool pprof
// -tagfocus=device=1" shows one GPU, and its kind of memory as the label
// "memory" (device, unified or pinned: Site.Memory). Values are exact:
// every allocation is recorded, none sampled.
func Profile() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"},
			{Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
		TimeNanos:         time.Now().UnixNano(),
	}
	exe, _ := os.Executable()
	// One mapping for the program, marked symbolized: the locations carry
	// their functions and lines already, so pprof must not try to
	// symbolize addresses itself.
	m := &profile.Mapping{ID: 1, File: exe, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*profile.Mapping{m}
	if !Enabled() {
		p.Comments = append(p.Comments, "leak tracing is off: GOCUDA_DEBUG=leaks or memprof.Enable() turns it on")
	}

	type fnKey struct{ name, file string }
	type locKey struct {
		fn   fnKey
		line int
	}
	funcs := map[fnKey]*profile.Function{}
	locs := map[locKey]*profile.Location{}
	for _, s := range Sites() {
		sample := &profile.Sample{
			Value: []int64{int64(s.Allocs), int64(s.AllocBytes), int64(s.Live), int64(s.LiveBytes)},
			// A string label: pprof drops numeric labels whose value is 0.
			Label: map[string][]string{"device": {strconv.Itoa(s.Device)}, "memory": {s.Memory.String()}},
		}
		// One location per logical frame (inlined calls expanded), so that
		// pprof shows the same lines as WriteReport.
		for _, f := range s.Frames() {
			fk := fnKey{f.Function, f.File}
			fn := funcs[fk]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: f.Function, SystemName: f.Function, Filename: f.File}
				funcs[fk] = fn
				p.Function = append(p.Function, fn)
			}
			lk := locKey{fk, f.Line}
			loc := locs[lk]
			if loc == nil {
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: uint64(f.PC),
					Line: []profile.Line{{Function: fn, Line: int64(f.Line)}}}
				locs[lk] = loc
				p.Location = append(p.Location, loc)
			}
			sample.Location = append(sample.Location, loc)
		}
		p.Sample = append(p.Sample, sample)
	}
	return p
}

// WriteProfile writes Profile to w, gzipped as pprof expects: save it to a
// file and open it with "go tool pprof FILE" or "go tool pprof -http=:8080 FILE".
func WriteProfile(w io.Writer) error {
	p := Profile()
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("memprof: built an invalid profile: %w", err)
	}
	return p.Write(w)
}
