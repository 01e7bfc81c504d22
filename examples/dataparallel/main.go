package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/examples/internal/mlp"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/rendezvous"
)

// Config is the run's model and data: examples/train's, with Batch the
// global batch, split evenly among the ranks.
type Config struct {
	Epochs  int     `json:"epochs"`
	Steps   int     `json:"steps_per_epoch"`
	Batch   int     `json:"batch"` // global: every rank takes Batch/ranks examples of each
	In      int     `json:"in"`
	Width   int     `json:"width"`
	Depth   int     `json:"depth"`
	Classes int     `json:"classes"`
	LR      float64 `json:"lr"`
	Mom     float64 `json:"momentum"`
	Seed    uint64  `json:"seed"`
	// Overlap is not the model's but how the ranks communicate: each
	// layer's all-reduce on a stream of its own, overlapping the rest of
	// the backward pass (-overlap), else on the compute stream, in turn
	// with it.
	Overlap bool `json:"overlap"`

	// saveData is -save-data's folder ("": none).
	saveData string
	// failRank fails at its step failStep (counted from 1 over the run;
	// 0 never): the tests' failing rank.
	failRank, failStep int
}

// defaultConfig is examples/train's H100 size; hostConfig and quickConfig
// are its host and CI sizes.
var (
	defaultConfig = Config{Epochs: 5, Steps: 8, Batch: 4096, In: 1024, Width: 4096, Depth: 4, Classes: 10, LR: 0.01, Mom: 0.9, Seed: 1, Overlap: true}
	hostConfig    = Config{Epochs: 5, Steps: 8, Batch: 512, In: 256, Width: 512, Depth: 2, Classes: 10, LR: 0.01, Mom: 0.9, Seed: 1, Overlap: true}
	quickConfig   = Config{Epochs: 4, Steps: 8, Batch: 128, In: 32, Width: 64, Depth: 2, Classes: 10, LR: 0.05, Mom: 0.9, Seed: 1, Overlap: true}
)

// Launch is how this process takes part: which ranks it runs.
type Launch struct {
	// Mode is "single" (one rank, no flags, no launcher), "goroutines"
	// (-ranks: every rank in this process, one goroutine and one device
	// each) or "launcher" (one rank of several processes, started by a
	// launcher: gocuda launch, torchrun, srun or mpirun).
	Mode string `json:"mode"`
	// Launcher is the launcher that started this process ("launcher"
	// mode): gocuda, torchrun, openmpi or slurm.
	Launcher string `json:"launcher,omitempty"`
	// World is the number of ranks in all.
	World int `json:"world_size"`
	// Rank and Local are this process's rank and device in "launcher"
	// mode (0 otherwise).
	Rank  int `json:"rank"`
	Local int `json:"local_rank"`
}

// parseLaunch reads the launcher's variables through getenv
// (rendezvous.FromEnv: gocuda launch's, torchrun's, Open MPI's or
// Slurm's); without them it is -ranks (ranks, set says whether it was
// given).
func parseLaunch(ranks int, set bool, getenv func(string) (string, bool)) (Launch, error) {
	rl, launched, err := rendezvous.FromEnv(getenv)
	if err != nil {
		return Launch{}, fmt.Errorf("dataparallel: %w", err)
	}
	if !launched {
		if ranks < 1 {
			return Launch{}, fmt.Errorf("dataparallel: -ranks %d: give at least 1", ranks)
		}
		if !set {
			return Launch{Mode: "single", World: 1}, nil
		}
		return Launch{Mode: "goroutines", World: ranks}, nil
	}
	if set {
		return Launch{}, fmt.Errorf("dataparallel: -ranks and %s's variables are both given: a launched process runs the one rank the launcher gave it", rl.Launcher)
	}
	return Launch{Mode: "launcher", Launcher: rl.Launcher, World: rl.Size, Rank: rl.Rank, Local: rl.LocalRank}, nil
}

// Epoch is one epoch's figures.
type Epoch struct {
	Epoch   int     `json:"epoch"`
	Seconds float64 `json:"seconds"`
	Loss    float64 `json:"loss"` // mean over the epoch's examples, all ranks'
}

// Report is what the program prints, and with -json prints as JSON.
type Report struct {
	Backend string  `json:"backend"`
	Device  string  `json:"device"`
	Pool    string  `json:"pool"`
	Launch  Launch  `json:"launch"`
	Config  Config  `json:"config"`
	Epochs  []Epoch `json:"epochs"` // data-parallel
	// StepMs is the time per step after the first epoch (over all steps
	// when there is one), as examples/train reports it.
	StepMs float64 `json:"step_ms"`
	// Single is the same training on one device with the whole batch
	// (-compare), and RelDiff the largest relative difference of an
	// epoch's loss between the two; absent without -compare and on
	// launched ranks other than 0.
	Single  []Epoch `json:"single_device,omitempty"`
	RelDiff float64 `json:"loss_relative_difference,omitempty"`
}

func main() {
	b, err := gocuda.Backend()
	if err != nil {
		log.Fatal(err)
	}
	cfg, l, opts, err := parseFlags(os.Args[1:], b.Name() == "host", os.LookupEnv)
	if err != nil {
		log.Fatal(err)
	}
	var progress io.Writer = os.Stdout
	if opts.json {
		progress = os.Stderr
	}
	rep, err := Run(context.Background(), cfg, l, opts.compare, progress)
	if err != nil {
		log.Fatal(err)
	}
	if opts.json && (l.Mode != "launcher" || l.Rank == 0) { // one report a job
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			log.Fatal(err)
		}
	}
}

type runOpts struct {
	json, compare bool
}

// parseFlags reads the flags over a preset: -quick's, else the host's on
// the host backend, else the GPU's.
func parseFlags(args []string, onHost bool, getenv func(string) (string, bool)) (Config, Launch, runOpts, error) {
	var opts runOpts
	fs := flag.NewFlagSet("dataparallel", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "a small model that runs in seconds on the host backend (CI)")
	ranks := fs.Int("ranks", 1, "run this many ranks in this process, a goroutine and a device each (not with the launcher's variables)")
	fs.BoolVar(&opts.json, "json", false, "print the report as JSON on stdout, progress on stderr")
	fs.BoolVar(&opts.compare, "compare", true, "also train on one device with the whole batch, and compare the losses")
	var c Config
	fs.IntVar(&c.Epochs, "epochs", 0, "epochs")
	fs.IntVar(&c.Steps, "steps", 0, "steps per epoch, each on its own batch")
	fs.IntVar(&c.Batch, "batch", 0, "examples per global batch, split evenly among the ranks")
	fs.IntVar(&c.In, "in", 0, "input features")
	fs.IntVar(&c.Width, "width", 0, "hidden layer width")
	fs.IntVar(&c.Depth, "depth", 0, "hidden layers")
	fs.IntVar(&c.Classes, "classes", 0, "classes")
	fs.Float64Var(&c.LR, "lr", 0, "SGD learning rate")
	fs.Float64Var(&c.Mom, "momentum", 0, "SGD momentum")
	fs.Uint64Var(&c.Seed, "seed", 0, "random seed for weights and data")
	fs.BoolVar(&c.Overlap, "overlap", true, "all-reduce each layer's gradients on a stream of their own, overlapping the backward pass (false: on the compute stream, in turn)")
	fs.StringVar(&c.saveData, "save-data", "", "write the initial weights and every batch to this `folder` (raw little-endian files and manifest.json), for bench/torch_ddp.py --data")
	if err := fs.Parse(args); err != nil {
		return c, Launch{}, opts, err
	}
	if fs.NArg() > 0 {
		return c, Launch{}, opts, fmt.Errorf("dataparallel: unexpected arguments %q; every setting is a flag (-h lists them)", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	base := defaultConfig
	switch {
	case *quick:
		base = quickConfig
	case onHost:
		base = hostConfig
	}
	over := func(name string, dst *int, v int) {
		if !set[name] {
			*dst = v
		}
	}
	over("epochs", &c.Epochs, base.Epochs)
	over("steps", &c.Steps, base.Steps)
	over("batch", &c.Batch, base.Batch)
	over("in", &c.In, base.In)
	over("width", &c.Width, base.Width)
	over("depth", &c.Depth, base.Depth)
	over("classes", &c.Classes, base.Classes)
	if !set["lr"] {
		c.LR = base.LR
	}
	if !set["momentum"] {
		c.Mom = base.Mom
	}
	if !set["seed"] {
		c.Seed = base.Seed
	}
	if !set["overlap"] {
		c.Overlap = base.Overlap
	}
	if set["save-data"] && c.saveData == "" {
		return c, Launch{}, opts, errors.New("dataparallel: -save-data is empty: give the folder to write the weights and batches to")
	}
	l, err := parseLaunch(*ranks, set["ranks"], getenv)
	if err != nil {
		return c, l, opts, err
	}
	return c, l, opts, c.check(l.World)
}

func (c Config) check(world int) error {
	for _, s := range []struct {
		name string
		v    int
	}{{"epochs", c.Epochs}, {"steps", c.Steps}, {"batch", c.Batch}, {"in", c.In}, {"width", c.Width}, {"depth", c.Depth}} {
		if s.v < 1 {
			return fmt.Errorf("dataparallel: -%s is %d; it must be at least 1", s.name, s.v)
		}
	}
	if c.Classes < 2 {
		return fmt.Errorf("dataparallel: -classes is %d; a classifier needs at least 2", c.Classes)
	}
	if !(c.LR > 0) || !(c.Mom >= 0 && c.Mom < 1) {
		return fmt.Errorf("dataparallel: -lr %v and -momentum %v: the rate must be positive and the momentum in [0, 1)", c.LR, c.Mom)
	}
	if c.Batch%world != 0 {
		return fmt.Errorf("dataparallel: the global batch of %d does not split evenly among %d ranks; give a -batch that is a multiple of %d", c.Batch, world, world)
	}
	return nil
}

// rank is one rank's place: its device and pool, and the communicator
// it joins: the id's (ranks of this process), the launcher's (join:
// nccl.JoinFromEnv) or none (the single-device run).
type rank struct {
	rank, world int
	dev         backend.Device
	pool        pool.Pool
	id          *nccl.UniqueID
	join        backend.Backend
}

// communicates says whether the rank has peers to all-reduce with.
func (r rank) communicates() bool { return r.id != nil || r.join != nil }

// Run trains cfg data-parallel as l says, printing progress to w, and
// with compare trains the single-device reference after it. ctx bounds
// the ranks' communicator: when it is done, or when any rank fails, the
// others stop with an error rather than wait for it.
func Run(ctx context.Context, cfg Config, l Launch, compare bool, w io.Writer) (*Report, error) {
	if err := cfg.check(l.World); err != nil {
		return nil, err
	}
	b, devs, pools, err := rankDevices(l)
	if err != nil {
		return nil, err
	}
	rep := &Report{Backend: b.Name(), Device: devs[0].Info().Name, Pool: pools[0].Name(), Launch: l, Config: cfg}
	switch l.Mode {
	case "launcher":
		fmt.Fprintf(w, "%s %q, pool %s: rank %d of %d, device %d\n", rep.Backend, rep.Device, rep.Pool, l.Rank, l.World, l.Local)
	default:
		fmt.Fprintf(w, "%s %q, pool %s: %d rank(s) in this process, a device each\n", rep.Backend, rep.Device, rep.Pool, l.World)
	}
	fmt.Fprintf(w, "MLP %d → %d×%d → %d, global batch %d (%d a rank), %d steps × %d epochs\n",
		cfg.In, cfg.Depth, cfg.Width, cfg.Classes, cfg.Batch, cfg.Batch/l.World, cfg.Steps, cfg.Epochs)

	var ranks []rank
	if l.Mode == "launcher" {
		ranks = []rank{{rank: l.Rank, world: l.World, dev: devs[0], pool: pools[0], join: b}}
	} else {
		id, err := nccl.NewUniqueID(b)
		if err != nil {
			return nil, err
		}
		for r := range l.World {
			ranks = append(ranks, rank{rank: r, world: l.World, dev: devs[r], pool: pools[r], id: &id})
		}
	}
	if rep.Epochs, err = runRanks(ctx, cfg, ranks, w); err != nil {
		return nil, err
	}
	rep.StepMs = stepMs(rep.Epochs, cfg.Steps)
	if !compare || ranks[0].rank != 0 {
		return rep, nil
	}
	fmt.Fprintf(w, "single device (device %d, the whole batch of %d):\n", devs[0].Ordinal(), cfg.Batch)
	if rep.Single, err = train(ctx, cfg, rank{world: 1, dev: devs[0], pool: pools[0]}, w); err != nil {
		return nil, fmt.Errorf("dataparallel: the single-device run: %w", err)
	}
	for i, e := range rep.Epochs {
		rep.RelDiff = max(rep.RelDiff, math.Abs(e.Loss-rep.Single[i].Loss)/math.Abs(rep.Single[i].Loss))
	}
	last := len(rep.Epochs) - 1
	fmt.Fprintf(w, "final loss: data-parallel %.6f (%d ranks), single device %.6f; largest relative difference over the epochs %.2g\n",
		rep.Epochs[last].Loss, l.World, rep.Single[last].Loss, rep.RelDiff)
	return rep, nil
}

// rankDevices is the devices and pools of the ranks this process runs:
// the launcher's local device, or one device per rank. The process's
// backend serves when it has enough devices; the host backend is made
// with as many devices as ranks when it has fewer.
func rankDevices(l Launch) (backend.Backend, []backend.Device, []pool.Pool, error) {
	b, err := gocuda.Backend()
	if err != nil {
		return nil, nil, nil, err
	}
	ordinals := []int{l.Local}
	if l.Mode != "launcher" {
		ordinals = make([]int, l.World)
		for i := range ordinals {
			ordinals[i] = i
		}
	} else if b.Name() == "host" && l.World > 1 {
		return nil, nil, nil, fmt.Errorf("dataparallel: launched as rank %d of %d on the host backend, whose ranks must all be goroutines of one process: use -ranks %d instead",
			l.Rank, l.World, l.World)
	} else if ordinals[0], err = rendezvous.LocalDevice(l.Local, b.DeviceCount()); err != nil {
		return nil, nil, nil, fmt.Errorf("dataparallel: %w", err) // the device nccl.JoinFromEnv takes
	}
	need := ordinals[len(ordinals)-1] + 1
	if b.DeviceCount() >= need {
		var devs []backend.Device
		var pools []pool.Pool
		for _, o := range ordinals {
			d, err := gocuda.Device(o)
			if err != nil {
				return nil, nil, nil, err
			}
			p, err := gocuda.Pool(o)
			if err != nil {
				return nil, nil, nil, err
			}
			devs, pools = append(devs, d), append(pools, p)
		}
		return b, devs, pools, nil
	}
	if b.Name() != "host" {
		return nil, nil, nil, fmt.Errorf("dataparallel: %d ranks need a device each, and this machine has %d", need, b.DeviceCount())
	}
	// The host backend, with a device a rank: pools as gocuda makes them,
	// with the pressure layer.
	c, err := gocuda.Config()
	if err != nil {
		return nil, nil, nil, err
	}
	hb := host.New(host.Options{Devices: need})
	var devs []backend.Device
	var pools []pool.Pool
	for _, o := range ordinals {
		d, err := hb.Device(o)
		if err != nil {
			return nil, nil, nil, err
		}
		p, err := pool.New(c.Pool, d, gocuda.LimitsFor(c, d))
		if err != nil {
			return nil, nil, nil, err
		}
		wp, err := gcpressure.Wrap(p, gcpressure.Options{Early: c.GCEarly})
		if err != nil {
			return nil, nil, nil, err
		}
		devs, pools = append(devs, d), append(pools, wp)
	}
	return hb, devs, pools, nil
}

// runRanks trains every rank on its own goroutine and returns rank 0's
// epochs (each rank's losses are the same: they are all-reduced). The
// first rank to fail cancels the others' communicator, so that none waits
// for it. The error is the first failure that is a rank's own: a rank
// that fails aborts its communicator before its goroutine reports, so the
// others' "aborted" errors may be reported first, and they only echo it.
func runRanks(ctx context.Context, cfg Config, ranks []rank, w io.Writer) ([]Epoch, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	epochs := make([][]Epoch, len(ranks))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error // in the order the ranks reported them
	for i, r := range ranks {
		out := io.Discard
		if r.rank == 0 {
			out = w
		}
		wg.Go(func() {
			var err error
			epochs[i], err = train(ctx, cfg, r, out)
			if err != nil {
				err = fmt.Errorf("dataparallel: rank %d: %w", r.rank, err)
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
				cancel(err)
			}
		})
	}
	wg.Wait()
	if len(failures) == 0 {
		return epochs[0], nil
	}
	for _, err := range failures {
		if !errors.Is(err, nccl.ErrAborted) {
			return nil, err
		}
	}
	// Every rank was aborted: by the caller's context, whose cause each wraps.
	return nil, failures[0]
}

// train trains the model on r's device: on its shard of each global
// batch, the gradients averaged over the ranks by the communicator; with
// no communicator, on the whole batch.
func train(ctx context.Context, cfg Config, r rank, w io.Writer) (epochs []Epoch, err error) {
	s, err := cuarray.NewStreamPool(r.pool)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	// The collectives' stream: with -overlap a stream of its own, so that
	// a layer's all-reduce runs while the compute stream goes on with the
	// layers below, and the updates wait for it through the arrays'
	// ordering (mlp.MLP.StepReduce); without, the compute stream, where
	// each all-reduce runs in turn with the backward pass. Every
	// collective of the communicator goes on this one stream, so that
	// they keep one order on the device, as on every rank.
	cs := s
	if r.communicates() && cfg.Overlap {
		if cs, err = cuarray.NewStreamPool(r.pool); err != nil {
			return nil, err
		}
		defer cs.Close()
	}
	var comm *nccl.Comm
	if r.communicates() {
		if r.join != nil {
			// The launcher's rendezvous: rank 0's id, this process's rank
			// and device; a rank that fails or dies elsewhere aborts ours.
			comm, err = nccl.JoinFromEnv(ctx, r.join)
		} else {
			comm, err = nccl.NewComm(ctx, r.dev, *r.id, r.rank, r.world)
		}
		if err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = comm.Abort() // the others must not wait for this rank
			} else {
				err = comm.Destroy()
			}
		}()
	}
	// Every rank makes the same model and the same data from the seed,
	// and keeps its shard of each batch: a real program reads only its
	// shard, and broadcasts rank 0's weights (nccl.BroadcastArray).
	f := cuarray.On[float32](s)
	model, data, err := makeModelAndData(f, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.saveData != "" && comm != nil && r.rank == 0 {
		// Before the first epoch's clock starts; the other ranks wait
		// for rank 0 in their first all-reduce, in the warm-up epoch.
		if err := saveData(cfg.saveData, cfg, model, data); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote the initial weights and the %d batches to %s\n", len(data), cfg.saveData)
	}
	local := cfg.Batch / r.world
	shards := make([]mlp.Batch, len(data))
	for i, d := range data {
		if shards[i], err = shard(d, r.rank, local, cfg.In); err != nil {
			return nil, err
		}
	}
	// The loss of the mean over the global batch has the mean of the
	// ranks' gradients (each of the mean over its shard) as its gradient.
	// A layer's dW and db go in one group, one launch: the bias, a few
	// KiB, rides with its weight rather than paying a launch of its own.
	// No further bucketing: the smallest layer (the classifier's) is
	// reduced while the next layer's backward runs, and the others are
	// as large as DistributedDataParallel's buckets or larger.
	var reduce mlp.Reduce
	if comm != nil {
		reduce = func(dW, db *cuarray.Array[float32]) error {
			return comm.Group(func() error {
				if err := nccl.AllReduceArray(comm, cs, dW, dW, nccl.Avg); err != nil {
					return err
				}
				return nccl.AllReduceArray(comm, cs, db, db, nccl.Avg)
			})
		}
	}
	step := 0
	for e := range cfg.Epochs {
		t0 := time.Now()
		total, err := f.Zeros(local)
		if err != nil {
			return nil, err
		}
		for _, b := range shards {
			step++
			if r.rank == cfg.failRank && step == cfg.failStep {
				return nil, fmt.Errorf("step %d: %w", step, errInjected)
			}
			loss, err := model.StepReduce(b.X, b.Labels, reduce)
			if err != nil {
				return nil, fmt.Errorf("epoch %d: %w", e+1, err)
			}
			if _, err := f.Axpy(total, 1, loss, total); err != nil {
				return nil, err
			}
		}
		if comm != nil {
			if err := nccl.AllReduceArray(comm, cs, total, total, nccl.Sum); err != nil {
				return nil, err
			}
		}
		sum, err := f.Sum(total) // waits for the epoch's work
		if err != nil {
			return nil, err
		}
		if comm != nil {
			// A peer's failure aborts the communicator: the sum is then
			// of whatever the aborted work left.
			if err := comm.Err(); err != nil {
				return nil, err
			}
		}
		d := time.Since(t0)
		ep := Epoch{Epoch: e + 1, Seconds: d.Seconds(), Loss: float64(sum) / float64(cfg.Batch*cfg.Steps)}
		epochs = append(epochs, ep)
		fmt.Fprintf(w, "epoch %d: %7.3fs  %7.2f ms/step  loss %.6f\n", ep.Epoch, ep.Seconds, 1e3*ep.Seconds/float64(cfg.Steps), ep.Loss)
	}
	return epochs, nil
}

// makeModelAndData makes cfg's model and data on f's stream from the
// seed, as every rank does (and examples/train: the same generator and
// the same draws).
func makeModelAndData(f cuarray.Ops[float32], cfg Config) (*mlp.MLP, []mlp.Batch, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed)) // examples/train's
	data, err := mlp.MakeData(f, rng, cfg.Steps, cfg.Batch, cfg.In, cfg.Classes)
	if err != nil {
		return nil, nil, fmt.Errorf("making the data: %w", err)
	}
	model, err := mlp.NewMLP(f, rng, cfg.In, cfg.Width, cfg.Depth, cfg.Classes, float32(cfg.LR), float32(cfg.Mom))
	if err != nil {
		return nil, nil, fmt.Errorf("making the model: %w", err)
	}
	return model, data, nil
}

// dataFormat names the layout of -save-data's files, for readers to check.
const dataFormat = "gocuda dataparallel data 1"

// savedArray is one array of -save-data: a file of its elements, raw and
// little-endian, in row-major order.
type savedArray struct {
	File  string `json:"file"`
	DType string `json:"dtype"` // "float32" or "int32"
	Shape []int  `json:"shape"`
}

// savedLayer is one layer's initial parameters. The weight is in × out,
// applied as x·W: PyTorch's nn.Linear.weight is its transpose.
type savedLayer struct {
	Weight savedArray `json:"weight"`
	Bias   savedArray `json:"bias"`
	Relu   bool       `json:"relu"`
}

// savedBatch is one global batch: inputs batch × in, labels batch
// classes (0 to classes-1).
type savedBatch struct {
	X      savedArray `json:"x"`
	Labels savedArray `json:"labels"`
}

// dataManifest is -save-data's manifest.json.
type dataManifest struct {
	Format    string       `json:"format"`
	ByteOrder string       `json:"byte_order"`
	Note      string       `json:"note"`
	Config    Config       `json:"config"`
	Layers    []savedLayer `json:"layers"`
	Batches   []savedBatch `json:"batches"`
}

// saveData writes model's weights and biases and every batch of data to
// dir, with manifest.json naming them, so that another program
// (bench/torch_ddp.py --data) trains from the very same numbers rather
// than its own generator's. The manifest goes last: a folder with one
// holds a whole set.
func saveData(dir string, cfg Config, model *mlp.MLP, data []mlp.Batch) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-save-data: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, "manifest.json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("-save-data: %w", err)
	}
	man := dataManifest{
		Format:    dataFormat,
		ByteOrder: "little",
		Note:      "row-major arrays; a layer computes x·weight + bias (weight is in × out, nn.Linear.weight transposed), relu on all but the last",
		Config:    cfg,
	}
	for i, l := range model.Layers {
		wt, err := saveArray(dir, fmt.Sprintf("layer%d.weight.f32", i), l.W)
		if err != nil {
			return err
		}
		b, err := saveArray(dir, fmt.Sprintf("layer%d.bias.f32", i), l.B)
		if err != nil {
			return err
		}
		man.Layers = append(man.Layers, savedLayer{Weight: wt, Bias: b, Relu: l.Relu})
	}
	for i, d := range data {
		x, err := saveArray(dir, fmt.Sprintf("batch%d.x.f32", i), d.X)
		if err != nil {
			return err
		}
		labels, err := saveArray(dir, fmt.Sprintf("batch%d.labels.i32", i), d.Labels)
		if err != nil {
			return err
		}
		man.Batches = append(man.Batches, savedBatch{X: x, Labels: labels})
	}
	js, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("-save-data: %w", err)
	}
	return nil
}

// saveArray writes a's elements to dir/name, raw and little-endian.
func saveArray[T float32 | int32](dir, name string, a *cuarray.Array[T]) (savedArray, error) {
	v, err := a.ToSlice()
	if err != nil {
		return savedArray{}, fmt.Errorf("-save-data: reading %s back: %w", name, err)
	}
	buf := make([]byte, 0, 4*len(v))
	dtype := "int32"
	for _, x := range v {
		switch x := any(x).(type) {
		case float32:
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
			dtype = "float32"
		case int32:
			buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf, 0o644); err != nil {
		return savedArray{}, fmt.Errorf("-save-data: %w", err)
	}
	return savedArray{File: name, DType: dtype, Shape: a.Shape()}, nil
}

// errInjected is the tests' failing rank's error.
var errInjected = errors.New("injected failure")

// shard is rank's rows of batch d: views of its arrays, no copy.
func shard(d mlp.Batch, rank, local, in int) (mlp.Batch, error) {
	xv, err := d.X.View(rank*local*in, local*in)
	if err != nil {
		return mlp.Batch{}, err
	}
	x, err := xv.Reshape(local, in)
	if err != nil {
		return mlp.Batch{}, err
	}
	labels, err := d.Labels.View(rank*local, local)
	if err != nil {
		return mlp.Batch{}, err
	}
	return mlp.Batch{X: x, Labels: labels}, nil
}

func stepMs(epochs []Epoch, steps int) float64 {
	var sec float64
	n := 0
	for i, e := range epochs {
		if i == 0 && len(epochs) > 1 {
			continue // warm-up
		}
		sec += e.Seconds
		n += steps
	}
	return 1e3 * sec / float64(n)
}
