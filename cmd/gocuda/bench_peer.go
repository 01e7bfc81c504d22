package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
)

// peerPaths are the ways "gocuda bench peer" copies: as Copy does (peer to
// peer where the devices can reach each other), and forced through pinned
// host memory, as Copy does where they cannot.
var peerPaths = []string{"peer", "staged"}

// peerRow is one size and path: what the table prints and --json writes
// (bench/torch_peer.py --go-json reads it).
type peerRow struct {
	Bytes uint64 `json:"bytes"`
	Path  string `json:"path"`
	// Route is how the bytes went: on a GPU pair without peer access
	// "peer" is staged too, and the table must not hide it.
	Route string `json:"route"`
	// PipelinedSeconds is the best repeat's time for Iters copies and one
	// synchronization; PipelinedGBps is Bytes·Iters over it (1e9).
	PipelinedSeconds float64 `json:"pipelined_seconds"`
	PipelinedGBps    float64 `json:"pipelined_GBps"`
	// RoundTripUs is the median of Iters times of one copy and a
	// synchronization of the destination's stream, in microseconds.
	RoundTripUs float64 `json:"roundtrip_us"`
}

// peerReport is --json's file.
type peerReport struct {
	Backend string    `json:"backend"`
	From    int       `json:"from"`
	To      int       `json:"to"`
	Devices [2]string `json:"devices"`
	Iters   int       `json:"iters"`
	Repeats int       `json:"repeats"`
	Rows    []peerRow `json:"rows"`
}

func runBenchPeer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return kindUsage("peer", benchPeer(ctx, args, stdout, stderr))
}

func benchPeer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench peer", "[flags]", "Times cuarray's Copy between two devices, queued on a stream of the destination:\n"+
		"peer to peer, and staged through pinned host memory (as Copy does where peer\n"+
		"access is off). For each size and path: pipelined GB/s (--iters copies, then\n"+
		"one synchronization of the destination's stream; best of --repeats) and the\n"+
		"round-trip latency of one copy and its synchronization (median of --iters).\n"+
		"Run bench/torch_peer.py --go-json on --json's file to set them beside torch.", stdout)
	sizes := fs.String("sizes", "4KiB,1MiB,16MiB,256MiB", "copy sizes (forms like 512B, 64KiB, 1MiB)")
	paths := fs.String("paths", strings.Join(peerPaths, ","), "paths to time: peer, staged or both, comma-separated")
	iters := fs.Int("iters", 100, "copies per pipelined repeat, and round trips timed")
	repeats := fs.Int("repeats", 5, "pipelined repeats; the best is kept")
	from := fs.Int("from", 0, "source device")
	to := fs.Int("to", 1, "destination device")
	jsonOut := fs.String("json", "", "also write the rows to this file as JSON")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench peer takes no arguments, got %q", fs.Args())
	}
	var sz []uint64
	for _, s := range strings.Split(*sizes, ",") {
		n, err := parseSizeFlag("--sizes", s)
		if err != nil {
			return err
		}
		if n > uint64(maxInt) {
			return usageErrorf("--sizes %s: larger than an array can be", strings.TrimSpace(s))
		}
		sz = append(sz, n)
	}
	var ps []string
	for _, p := range strings.Split(*paths, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(peerPaths, p) {
			return usageErrorf("--paths: no path %q%s the paths are %s", p, orColon(didYouMean(p, peerPaths, "")), strings.Join(peerPaths, ", "))
		}
		ps = append(ps, p)
	}
	if *iters < 1 {
		return usageErrorf("--iters %d: give a positive count", *iters)
	}
	if *repeats < 1 {
		return usageErrorf("--repeats %d: give a positive count", *repeats)
	}
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	if err := checkPeerDevices(b, *from, *to); err != nil {
		return err
	}
	src, err := b.Device(*from)
	if err != nil {
		return err
	}
	dst, err := b.Device(*to)
	if err != nil {
		return err
	}
	ss, err := cuarray.NewStream(*from)
	if err != nil {
		return err
	}
	defer ss.Close()
	ds, err := cuarray.NewStream(*to)
	if err != nil {
		return err
	}
	defer ds.Close()
	// The switch is read as each copy is queued; it is put back before
	// this returns, whatever happens, for the tests that run this.
	defer testhook.StagePeerCopies.Store(false)

	rep := peerReport{Backend: b.Name(), From: *from, To: *to, Iters: *iters, Repeats: *repeats,
		Devices: [2]string{src.Info().Name, dst.Info().Name}}
	var notes []string
	prog := newProgress(stderr, *quiet)
	defer prog.done()
	cells, cell := len(sz)*len(ps), 0
	for _, n := range sz {
		pair, err := newCopyPair(ss, ds, int(n))
		if err != nil {
			return fmt.Errorf("%s: %w", humanize.IBytes(n), err)
		}
		for _, path := range ps {
			if err := ctx.Err(); err != nil {
				pair.free()
				return err
			}
			cell++
			prog.set("bench peer: %s %s (cell %d of %d)", humanize.IBytes(n), path, cell, cells)
			route := peerRoute(src, dst, path)
			if route == "" {
				if len(notes) == 0 {
					notes = append(notes, fmt.Sprintf("staged: skipped: the %s backend's devices share memory, there is nothing to stage", b.Name()))
				}
				continue
			}
			testhook.StagePeerCopies.Store(path == "staged")
			row, err := pair.time(*iters, *repeats)
			testhook.StagePeerCopies.Store(false)
			if err != nil {
				pair.free()
				return fmt.Errorf("%s %s: %w", humanize.IBytes(n), path, err)
			}
			row.Bytes, row.Path, row.Route = n, path, peerRoute(src, dst, path) // after the warm-up has linked the pair
			rep.Rows = append(rep.Rows, row)
		}
		pair.free()
	}
	prog.done()

	fmt.Fprintf(stdout, "backend %s\nfrom %s\nto   %s\n", b.Name(), src.Info(), dst.Info())
	fmt.Fprintf(stdout, "GB/s (1e9 bytes): %d copies then one synchronization, best of %d; round trip: one copy then its synchronization, median of %d\n\n",
		*iters, *repeats, *iters)
	fmt.Fprintf(stdout, "cuarray.Copy from device %d to device %d, on a stream of device %d\n", *from, *to, *to)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tpath\troute\tGB/s\tround trip µs\t")
	for _, r := range rep.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.1f\t\n", humanize.IBytes(r.Bytes), r.Path, r.Route, r.PipelinedGBps, r.RoundTripUs)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	if *jsonOut != "" {
		buf, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(buf, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

// checkPeerDevices says what is wrong with copying from device from to
// device to of b, if anything.
func checkPeerDevices(b backend.Backend, from, to int) error {
	n := b.DeviceCount()
	if n < 2 {
		return fmt.Errorf("needs two devices; this machine's %s backend has %d", b.Name(), n)
	}
	for _, d := range []struct {
		flag string
		v    int
	}{{"--from", from}, {"--to", to}} {
		if d.v < 0 || d.v >= n {
			return usageErrorf("%s %d: no such device; this machine's %s backend has devices 0 to %d", d.flag, d.v, b.Name(), n-1)
		}
	}
	if from == to {
		return usageErrorf("--from and --to are both %d: give two different devices", from)
	}
	return nil
}

// peerRoute is how a copy on path goes from src to dst, for the table: ""
// where path does not exist (staging between host devices).
func peerRoute(src, dst backend.Device, path string) string {
	gpus, direct := cudaPeer(dst, src)
	switch {
	case !gpus:
		if path == "staged" {
			return ""
		}
		return "memmove" // host devices share the process's memory
	case path == "staged":
		return "via host"
	case direct:
		return "peer to peer"
	default:
		return "via host (no peer access)"
	}
}

// copyPair is a source and a destination array of n bytes on their
// streams.
type copyPair struct {
	ss, ds   *cuarray.Stream
	src, dst *cuarray.Array[uint8]
}

func newCopyPair(ss, ds *cuarray.Stream, n int) (*copyPair, error) {
	// uint8, so that the length is the byte count; a copy does not care
	// what the bytes are, so New leaves them as they are.
	src, err := cuarray.On[uint8](ss).New(n)
	if err != nil {
		return nil, err
	}
	dst, err := cuarray.On[uint8](ds).New(n)
	if err != nil {
		src.UnsafeFree()
		return nil, err
	}
	return &copyPair{ss: ss, ds: ds, src: src, dst: dst}, nil
}

func (p *copyPair) free() {
	p.src.UnsafeFree()
	p.dst.UnsafeFree()
}

func (p *copyPair) copy() error { return cuarray.On[uint8](p.ds).Copy(p.dst, p.src) }

// time warms the pair up (the first copy enables peer access or allocates
// the staging buffers), then times the pipelined copies and the round
// trips. Every time ends with the destination's stream synchronized: the
// bytes have moved.
func (p *copyPair) time(iters, repeats int) (peerRow, error) {
	for range 3 {
		if err := p.copy(); err != nil {
			return peerRow{}, err
		}
	}
	if err := p.ds.Synchronize(); err != nil {
		return peerRow{}, err
	}
	best := time.Duration(1<<63 - 1)
	for range repeats {
		t0 := time.Now()
		for range iters {
			if err := p.copy(); err != nil {
				return peerRow{}, err
			}
		}
		if err := p.ds.Synchronize(); err != nil {
			return peerRow{}, err
		}
		// The best repeat: the one least disturbed by the rest of the
		// machine, as the copy itself always takes as long.
		best = min(best, time.Since(t0))
	}
	rt := make([]time.Duration, iters)
	for i := range rt {
		t0 := time.Now()
		if err := p.copy(); err != nil {
			return peerRow{}, err
		}
		if err := p.ds.Synchronize(); err != nil {
			return peerRow{}, err
		}
		rt[i] = time.Since(t0)
	}
	slices.Sort(rt)
	sec := best.Seconds()
	return peerRow{
		PipelinedSeconds: sec,
		PipelinedGBps:    float64(p.dst.Len()) * float64(iters) / sec / 1e9,
		RoundTripUs:      float64(rt[len(rt)/2].Nanoseconds()) / 1e3,
	}, nil
}
