package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/rendezvous"
)

// exitProcess ends the process with a rank's exit code: run maps errors
// to 1 and 2 only, and a launcher must exit as its failed rank did, as
// torchrun and mpirun do.
var exitProcess = os.Exit

// afterKill bounds the wait for ranks after SIGKILL (a process stuck in
// the kernel does not die at once); past it the launcher returns.
const afterKill = 10 * time.Second

func runLaunch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("launch", "[-n N] [--addr HOST:PORT] [--grace D] [--] PROGRAM [ARGS...]",
		"Starts N ranks of PROGRAM on this machine, one process each, as torchrun --standalone\n"+
			"--no-python does, and serves the rendezvous where they meet (package rendezvous;\n"+
			"a program calls nccl.JoinFromEnv). Each rank gets GOCUDA_RANK, GOCUDA_WORLD_SIZE,\n"+
			"GOCUDA_LOCAL_RANK, GOCUDA_RENDEZVOUS and GOCUDA_JOB, and NCCL_NVLS_ENABLE=0 unless\n"+
			"set. Ranks' output passes through. SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed\n"+
			"to every rank. When a rank fails, the others get SIGTERM, then SIGKILL after\n"+
			"--grace, and the launcher exits with the failed rank's code (128+N for signal N).", stdout)
	n := fs.Int("n", 0, "how many ranks to start (default: one per GPU this machine has)")
	addr := fs.String("addr", "127.0.0.1:0", "where the rendezvous listens; port 0 picks a free one")
	grace := fs.Duration("grace", 10*time.Second, "how long ranks have to exit after SIGTERM before SIGKILL")
	if err := fs.parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if fs.NArg() == 0 {
		return usageErrorf("no program given: gocuda launch -n 2 -- ./prog [args]")
	}
	if set["n"] && *n < 1 {
		return usageErrorf("-n %d: give at least 1 rank", *n)
	}
	if !set["n"] {
		b, err := gocuda.Backend()
		if err != nil {
			return err
		}
		if b.Name() != "cuda" || b.DeviceCount() == 0 {
			return usageErrorf("-n is needed: by default a rank is started per GPU, and the %s backend has none here; give -n N", b.Name())
		}
		*n = b.DeviceCount()
	}
	if *grace <= 0 {
		return usageErrorf("--grace %v: give a positive duration (10s)", *grace)
	}
	if _, _, err := net.SplitHostPort(*addr); err != nil {
		return usageErrorf("--addr %q: give host:port, as 127.0.0.1:0 (%v)", *addr, err)
	}
	prog, err := exec.LookPath(fs.Arg(0))
	if err != nil {
		return usageErrorf("program %q: %v", fs.Arg(0), err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	// main cancels ctx on SIGINT; here SIGINT is the ranks' to handle
	// (it is passed on), so only the signals decide.
	code, err := launch(context.WithoutCancel(ctx), launchConfig{
		n: *n, addr: *addr, grace: *grace, prog: prog, args: fs.Args()[1:],
		env: os.Environ(), stdout: stdout, stderr: stderr, signals: sigs,
	})
	if err != nil {
		return err
	}
	if code != 0 {
		exitProcess(code)
	}
	return nil
}

type launchConfig struct {
	n      int
	addr   string
	grace  time.Duration
	prog   string
	args   []string
	env    []string // the ranks' environment, before the launcher's variables
	stdout io.Writer
	stderr io.Writer
	// signals are passed on to the ranks; nil when none are caught.
	signals <-chan os.Signal
}

// rankExit is how one rank's process ended.
type rankExit struct {
	rank int
	ps   *os.ProcessState
	err  error
}

// launch starts the ranks, serves their rendezvous and waits for them.
// It returns the exit code the launcher should end with: 0 when every
// rank exited 0, else the first failed rank's code, or 128+N after
// signal N was passed to the ranks. Cancelling ctx stops the ranks as a
// failure does.
func launch(ctx context.Context, cfg launchConfig) (int, error) {
	job := fmt.Sprintf("launch-%016x", rand.Uint64())
	srv, err := rendezvous.Listen(cfg.addr, job, cfg.n)
	if err != nil {
		return 0, err
	}
	defer srv.Close()
	out, errOut := syncWriters(cfg.stdout, cfg.stderr)
	say := func(format string, a ...any) { fmt.Fprintf(errOut, "gocuda launch: "+format+"\n", a...) }

	base := nccl.Environ(withoutLauncherVars(cfg.env))
	procs := make([]*os.Process, cfg.n)
	running := make([]bool, cfg.n)
	exits := make(chan rankExit, cfg.n)
	started := 0
	for r := range cfg.n {
		cmd := exec.Command(cfg.prog, cfg.args...)
		cmd.Env = append(slices.Clip(base),
			config.EnvRank+"="+strconv.Itoa(r), config.EnvWorldSize+"="+strconv.Itoa(cfg.n),
			config.EnvLocalRank+"="+strconv.Itoa(r), config.EnvRendezvous+"="+srv.Addr(), config.EnvJob+"="+job)
		cmd.Stdout, cmd.Stderr = out, errOut
		// Output copied through a pipe (a writer that is not a file) must
		// not hold Wait past the rank's end when a child of it keeps it.
		cmd.WaitDelay = time.Second
		ownGroup(cmd)
		if err := cmd.Start(); err != nil {
			err = fmt.Errorf("cannot start rank %d: %w", r, err)
			if started > 0 {
				say("%v; stopping the ranks started", err)
				stopRanks(procs, running, exits, started, cfg.grace, say)
			}
			return 0, err
		}
		procs[r], running[r] = cmd.Process, true
		started++
		go func() {
			err := cmd.Wait()
			exits <- rankExit{rank: r, ps: cmd.ProcessState, err: err}
		}()
	}

	code := 0
	stopping, stopSig := false, "SIGTERM"
	var grace, giveUp <-chan time.Time
	stop := func(why string, c int) {
		if stopping {
			return
		}
		stopping, code = true, c
		say("%s; stopping the other ranks (SIGTERM, then SIGKILL after %v)", why, cfg.grace)
		signalRanks(procs, running, termSignal)
		grace = time.After(cfg.grace)
	}
	done := ctx.Done()
	for left := cfg.n; left > 0; {
		select {
		case e := <-exits:
			left--
			running[e.rank] = false
			if c, how := howEnded(e.ps, e.err); c != 0 {
				stop(fmt.Sprintf("rank %d %s", e.rank, how), c)
			}
		case sig := <-cfg.signals:
			// Every signal is passed on, a second Ctrl-C too; the first
			// one sets the exit code and starts the grace period.
			if !stopping {
				stopping, code, stopSig = true, 128+signalNumber(sig), signalName(sig)
				say("%s: passed to the ranks; SIGKILL after %v", signalName(sig), cfg.grace)
				grace = time.After(cfg.grace)
			}
			signalRanks(procs, running, sig)
		case <-done:
			done = nil
			stop("stopped", 1)
		case <-grace:
			grace = nil
			say("%s still running %v after %s: SIGKILL", ranksList(running), cfg.grace, stopSig)
			signalRanks(procs, running, os.Kill)
			giveUp = time.After(afterKill)
		case <-giveUp:
			say("%s did not exit within %v of SIGKILL: leaving them", ranksList(running), afterKill)
			return code, nil
		}
	}
	return code, nil
}

// stopRanks stops the ranks already started when a later one could not
// start: SIGTERM, SIGKILL after grace, then at most afterKill more.
func stopRanks(procs []*os.Process, running []bool, exits chan rankExit, n int, grace time.Duration, say func(string, ...any)) {
	signalRanks(procs, running, termSignal)
	deadline := time.After(grace)
	killed := false
	for n > 0 {
		select {
		case e := <-exits:
			running[e.rank] = false
			n--
		case <-deadline:
			if killed {
				say("%s did not exit within %v of SIGKILL: leaving them", ranksList(running), afterKill)
				return
			}
			signalRanks(procs, running, os.Kill)
			killed, deadline = true, time.After(afterKill)
		}
	}
}

func signalRanks(procs []*os.Process, running []bool, sig os.Signal) {
	for r, p := range procs {
		if p != nil && running[r] {
			signalGroup(p, sig)
		}
	}
}

func ranksList(running []bool) string {
	var rs []string
	for r, on := range running {
		if on {
			rs = append(rs, strconv.Itoa(r))
		}
	}
	if len(rs) == 1 {
		return "rank " + rs[0] + " is"
	}
	return "ranks " + strings.Join(rs, ", ") + " are"
}

// signalName is the signal's name as shells and kill(1) write it.
func signalName(sig os.Signal) string {
	names := map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT"}
	if n, ok := names[sig]; ok {
		return n
	}
	return sig.String()
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 1
}

// withoutLauncherVars drops the variables a launcher sets, so that a
// launch inside another does not leak the outer one's into the ranks.
func withoutLauncherVars(env []string) []string {
	drop := config.LauncherNames()
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(drop, k)
	})
}

// syncWriters makes the ranks' output safe to share: os/exec copies a
// writer that is not a file on a goroutine per rank. Files pass as they
// are (the ranks write to them directly).
func syncWriters(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	mu := &sync.Mutex{} // one lock: stdout and stderr may be one writer
	wrap := func(w io.Writer) io.Writer {
		if _, ok := w.(*os.File); ok {
			return w
		}
		return &lockedWriter{mu: mu, w: w}
	}
	return wrap(stdout), wrap(stderr)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
