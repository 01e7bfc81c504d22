package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/rendezvous"
)

// allReduceRow is one size and registration: the time of one all-reduce
// and nccl-tests' bandwidths, as bench/torch_allreduce.py prints them.
type allReduceRow struct {
	Bytes      int     `json:"bytes"`
	Registered bool    `json:"registered"`
	Seconds    float64 `json:"seconds"`
	AlgBW      float64 `json:"algbw_GBps"`
	BusBW      float64 `json:"busbw_GBps"`
}

// allReduceReport is what --json writes.
type allReduceReport struct {
	// Mode is "one process" (this process drives every rank, in
	// nccl.Group) or "a process per rank" (started by a launcher).
	Mode   string         `json:"mode"`
	Ranks  int            `json:"ranks"`
	Device string         `json:"device"`
	NCCL   string         `json:"nccl"`
	Rows   []allReduceRow `json:"rows"`
}

// allReduceRank is one rank this process drives.
type allReduceRank struct {
	comm *nccl.Comm
	s    *cuarray.Stream
	dev  backend.Device
}

func runBenchAllReduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return kindUsage("allreduce", benchAllReduce(ctx, args, stdout))
}

func benchAllReduce(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("bench allreduce", "[flags]", "Times in-place float32 sum all-reduces across GPUs through NCCL, on cuarray arrays, as\n"+
		"bench/torch_allreduce.py times torch.distributed's: --iters all-reduces after --warmup,\n"+
		"between events on rank 0's stream; algbw is bytes/time, busbw algbw·2(n-1)/n.\n"+
		"Started by a launcher (gocuda launch, torchrun, srun, mpirun), each process is one rank\n"+
		"(nccl.JoinFromEnv) and rank 0 prints; otherwise this process drives --ranks devices.", stdout)
	ranks := fs.Int("ranks", 0, "ranks in this process, one device each (default: every device; not with a launcher)")
	sizes := fs.String("sizes", "1KiB,64KiB,1MiB,16MiB,64MiB,256MiB", "buffer sizes, bench/torch_allreduce.py's by default")
	iters := fs.Int("iters", 50, "timed all-reduces per size")
	warmup := fs.Int("warmup", 5, "untimed all-reduces first (NCCL sets up a size's first call)")
	register := fs.String("register", "both", "register the buffers with the communicator (ncclCommRegister): on, off or both")
	jsonFile := fs.String("json", "", "also write the rows as JSON to this file (rank 0)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench allreduce takes no arguments, got %q", fs.Args())
	}
	var sz []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := parseSizeFlag("--sizes", s)
		if err != nil {
			return err
		}
		if n%4 != 0 {
			return usageErrorf("--sizes %q: the buffers are float32, so a size is a multiple of 4 bytes", strings.TrimSpace(s))
		}
		sz = append(sz, int(n))
	}
	if *iters < 1 || *warmup < 0 {
		return usageErrorf("--iters %d --warmup %d: give at least one timed all-reduce and no negative warm-up", *iters, *warmup)
	}
	var regs []bool
	switch *register {
	case "off":
		regs = []bool{false}
	case "on":
		regs = []bool{true}
	case "both":
		regs = []bool{false, true}
	default:
		return usageErrorf("--register %q: give on, off or both", *register)
	}

	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	_, launched, err := rendezvous.FromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	rep := allReduceReport{Mode: "one process"}
	var rs []allReduceRank
	if launched {
		if *ranks != 0 {
			return usageErrorf("--ranks %d with a launcher's variables set: a launched process is the one rank the launcher gave it", *ranks)
		}
		c, err := nccl.JoinFromEnv(ctx, b)
		if err != nil {
			return err
		}
		defer c.Destroy()
		rs = []allReduceRank{{comm: c, dev: c.Device()}}
		rep.Mode, rep.Ranks = "a process per rank", c.Size()
	} else {
		n := *ranks
		if n == 0 {
			n = b.DeviceCount()
		}
		if n < 1 || n > b.DeviceCount() {
			return usageErrorf("--ranks %d: this machine's %s backend has %d devices, and each rank takes one", n, b.Name(), b.DeviceCount())
		}
		devs := make([]backend.Device, n)
		for i := range devs {
			if devs[i], err = b.Device(i); err != nil {
				return err
			}
		}
		comms, err := nccl.NewComms(ctx, devs)
		if err != nil {
			return err
		}
		defer func() {
			for _, c := range comms {
				_ = c.Destroy()
			}
		}()
		for i, c := range comms {
			rs = append(rs, allReduceRank{comm: c, dev: devs[i]})
		}
		rep.Ranks = n
	}
	for i := range rs {
		p, err := gocuda.Pool(rs[i].dev.Ordinal())
		if err != nil {
			return err
		}
		if rs[i].s, err = cuarray.NewStreamPool(p); err != nil {
			return err
		}
		defer rs[i].s.Close()
	}
	rep.Device = rs[0].dev.Info().Name
	if b.Name() != "host" {
		if major, minor, patch, err := nccl.Version(); err == nil {
			rep.NCCL = fmt.Sprintf("%d.%d.%d", major, minor, patch)
		}
	}
	lead := rs[0].comm.Rank() == 0 // prints and writes the JSON
	for _, size := range sz {
		for _, reg := range regs {
			row, err := timeAllReduce(rs, size, reg, *warmup, *iters)
			if err != nil {
				return fmt.Errorf("%s, registered %v: %w", humanize.IBytes(uint64(size)), reg, err)
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	if !lead {
		return nil
	}
	fmt.Fprintf(stdout, "all-reduce, float32 sum in place: %d ranks (%s) on %s, NCCL %s\n", rep.Ranks, rep.Mode, rep.Device, orNone(rep.NCCL))
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bytes\tregistered\ttime (us)\talgbw (GB/s)\tbusbw (GB/s)\t")
	for _, r := range rep.Rows {
		fmt.Fprintf(tw, "%d\t%v\t%.1f\t%.1f\t%.1f\t\n", r.Bytes, r.Registered, r.Seconds*1e6, r.AlgBW, r.BusBW)
	}
	tw.Flush()
	if *jsonFile != "" {
		out, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(*jsonFile, append(out, '\n'), 0o644)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none: host backend)"
	}
	return s
}

// timeAllReduce times iters in-place all-reduces of size bytes on every
// rank in rs, registered or not, after warmup untimed ones: between two
// events on rank 0's stream, as torch_allreduce.py times them, so that
// the host's time to queue them counts where it is longer than the GPU's.
func timeAllReduce(rs []allReduceRank, size int, reg bool, warmup, iters int) (row allReduceRow, err error) {
	xs := make([]*cuarray.Array[float32], len(rs))
	for i, r := range rs {
		if xs[i], err = cuarray.On[float32](r.s).Ones(size / 4); err != nil {
			return row, err
		}
		defer xs[i].UnsafeFree()
		if reg {
			g, err := nccl.RegisterArray(r.comm, r.s, xs[i])
			if err != nil {
				return row, err
			}
			defer func() { err = errors.Join(err, g.Release()) }()
		}
	}
	comms := make([]*nccl.Comm, len(rs))
	for i, r := range rs {
		comms[i] = r.comm
	}
	queue := func() error {
		if len(rs) == 1 {
			return nccl.AllReduceArray(rs[0].comm, rs[0].s, xs[0], xs[0], nccl.Sum)
		}
		// One goroutine drives every rank: their calls go in one group.
		return nccl.Group(comms, func() error {
			for i, r := range rs {
				if err := nccl.AllReduceArray(r.comm, r.s, xs[i], xs[i], nccl.Sum); err != nil {
					return err
				}
			}
			return nil
		})
	}
	sync := func() error {
		for _, r := range rs {
			if err := r.s.Synchronize(); err != nil {
				return err
			}
		}
		for _, r := range rs {
			if err := r.comm.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	for range warmup {
		if err := queue(); err != nil {
			return row, err
		}
	}
	if err := sync(); err != nil {
		return row, err
	}
	bs := rs[0].s.Backend()
	start, err := rs[0].dev.NewEvent(true)
	if err != nil {
		return row, err
	}
	defer start.Destroy()
	end, err := rs[0].dev.NewEvent(true)
	if err != nil {
		return row, err
	}
	defer end.Destroy()
	if err := start.Record(bs); err != nil {
		return row, err
	}
	for range iters {
		if err := queue(); err != nil {
			return row, err
		}
	}
	if err := end.Record(bs); err != nil {
		return row, err
	}
	if err := sync(); err != nil {
		return row, err
	}
	d, err := end.Elapsed(start)
	if err != nil {
		return row, err
	}
	t := max(d, time.Nanosecond).Seconds() / float64(iters)
	n := float64(len(rs))
	if len(rs) == 1 {
		n = float64(rs[0].comm.Size())
	}
	algbw := float64(size) / t / 1e9
	return allReduceRow{Bytes: size, Registered: reg, Seconds: t, AlgBW: algbw, BusBW: algbw * 2 * (n - 1) / n}, nil
}
