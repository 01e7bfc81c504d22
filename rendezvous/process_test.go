package rendezvous

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rankScenario, when set, makes this test binary a rank of a job that a
// test started (rankMain) instead of running the tests.
const (
	rankScenario = "GOCUDA_TEST_RENDEZVOUS_SCENARIO"
	dyingRank    = "GOCUDA_TEST_RENDEZVOUS_DYING"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(rankScenario); s != "" {
		os.Exit(rankMain(s))
	}
	os.Exit(m.Run())
}

// rankMain is one rank: it joins as the environment says and plays the
// scenario, printing what it saw.
func rankMain(scenario string) int {
	l, ok, err := FromEnv(os.LookupEnv)
	if err != nil || !ok {
		fmt.Printf("launch: ok %v, %v\n", ok, err)
		return 2
	}
	ctx := context.Background()
	m, err := Join(ctx, l, Options{}) // GOCUDA_RENDEZVOUS_TIMEOUT
	if err != nil {
		fmt.Printf("join: %v\n", err)
		return 1
	}
	defer m.Close()
	switch scenario {
	case "ok":
		v, err := m.Share(ctx, "greeting", func() ([]byte, error) {
			return []byte("hello from pid " + strconv.Itoa(os.Getpid())), nil
		})
		if err == nil {
			err = m.Barrier(ctx, "end")
		}
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return 1
		}
		fmt.Printf("shared: %s\n", v)
	case "dies":
		if err := m.Barrier(ctx, "joined"); err != nil {
			fmt.Printf("error: %v\n", err)
			return 1
		}
		if strconv.Itoa(m.Rank()) == os.Getenv(dyingRank) {
			// A moment for the others to get the barrier's answer: a
			// hosting rank 0 that died at once could take it with it.
			time.Sleep(200 * time.Millisecond)
			os.Exit(7) // without leaving, as a crash would
		}
		start := time.Now()
		select {
		case <-m.Failed():
			fmt.Printf("heard after %v: %v\n", time.Since(start).Round(time.Millisecond), m.Err())
		case <-time.After(20 * time.Second):
			fmt.Println("heard nothing within 20s")
			return 1
		}
	}
	return 0
}

// rankProc is a rank's process.
type rankProc struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
}

// launcherVars are what a launcher sets: cleared from the children's
// environment so that the one running the tests does not leak in.
func childEnv(kv ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(k, "GOCUDA_"), strings.HasPrefix(k, "OMPI_"), strings.HasPrefix(k, "SLURM_"),
			strings.HasPrefix(k, "TORCHELASTIC_"), strings.HasPrefix(k, "PMIX_"),
			k == "RANK", k == "WORLD_SIZE", k == "LOCAL_RANK", k == "MASTER_ADDR", k == "MASTER_PORT":
			continue
		}
		env = append(env, e)
	}
	if os.Getenv("GORACE") == "" {
		// The race detector waits 1 s at exit by default: every rank
		// would.
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return append(env, kv...)
}

func startRank(t *testing.T, scenario string, kv ...string) *rankProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a backstop only
	t.Cleanup(cancel)
	p := &rankProc{cmd: exec.CommandContext(ctx, os.Args[0], "-test.run=^$"), done: make(chan error, 1)}
	p.cmd.Env = childEnv(append([]string{rankScenario + "=" + scenario}, kv...)...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	return p
}

// wait returns the process's exit code and output, failing the test if it
// runs past bound.
func (p *rankProc) wait(t *testing.T, bound time.Duration) (int, string) {
	t.Helper()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), p.out.String()
		}
		require.NoError(t, err)
		return 0, p.out.String()
	case <-time.After(bound):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("pid %d ran past %v:\n%s", p.cmd.Process.Pid, bound, p.out.String())
		return 0, ""
	}
}

func gocudaVars(rank, size int, job string, more ...string) []string {
	return append([]string{"GOCUDA_RANK=" + strconv.Itoa(rank), "GOCUDA_WORLD_SIZE=" + strconv.Itoa(size), "GOCUDA_JOB=" + job}, more...)
}

func masterVars(addr string) []string {
	host, port, _ := net.SplitHostPort(addr)
	return []string{"MASTER_ADDR=" + host, "MASTER_PORT=" + port}
}

func TestProcessesJoinShareAndLeave(t *testing.T) {
	addr := freeAddr(t)
	var ps []*rankProc
	for r := range 3 {
		ps = append(ps, startRank(t, "ok", gocudaVars(r, 3, "job-ok", append(masterVars(addr), "GOCUDA_RENDEZVOUS_TIMEOUT=20s")...)...))
	}
	want := fmt.Sprintf("shared: hello from pid %d\n", ps[0].cmd.Process.Pid)
	for r, p := range ps {
		code, out := p.wait(t, 20*time.Second)
		assert.Equal(t, 0, code, "rank %d:\n%s", r, out)
		assert.Equal(t, want, out, "rank %d", r)
	}
}

// A rank that dies after joining (os.Exit without Close) is named to the
// others, within a bound; so is a hosting rank 0 that dies.
func TestProcessesHearOfARankThatDied(t *testing.T) {
	for _, tc := range []struct {
		dying int
		want  func(addr string, pid int) string
	}{
		{2, func(addr string, pid int) string {
			return fmt.Sprintf("pid %d): its connection closed before it left: the process exited or was killed", pid)
		}},
		{0, func(addr string, pid int) string {
			return "rendezvous at " + addr + " (hosted by rank 0) is gone"
		}},
	} {
		t.Run("rank "+strconv.Itoa(tc.dying), func(t *testing.T) {
			addr := freeAddr(t)
			var ps []*rankProc
			for r := range 3 {
				ps = append(ps, startRank(t, "dies", gocudaVars(r, 3, "job-dies", append(masterVars(addr),
					"GOCUDA_RENDEZVOUS_TIMEOUT=20s", dyingRank+"="+strconv.Itoa(tc.dying))...)...))
			}
			for r, p := range ps {
				code, out := p.wait(t, 20*time.Second)
				if r == tc.dying {
					assert.Equal(t, 7, code, out)
					continue
				}
				assert.Equal(t, 0, code, "rank %d:\n%s", r, out)
				assert.Contains(t, out, tc.want(addr, ps[tc.dying].cmd.Process.Pid), "rank %d", r)
				var took time.Duration
				if _, after, ok := strings.Cut(out, "heard after "); ok {
					took, _ = time.ParseDuration(strings.Fields(after)[0][:len(strings.Fields(after)[0])-1])
				}
				assert.Less(t, took, 3*time.Second, "rank %d heard within 3s: %s", r, out)
			}
		})
	}
}

func TestProcessesNameARankThatNeverArrives(t *testing.T) {
	addr := freeAddr(t)
	start := time.Now()
	var ps []*rankProc
	for r := range 2 { // of 3
		ps = append(ps, startRank(t, "ok", gocudaVars(r, 3, "job-late", append(masterVars(addr), "GOCUDA_RENDEZVOUS_TIMEOUT=1s")...)...))
	}
	for r, p := range ps {
		code, out := p.wait(t, 10*time.Second)
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "rendezvous at "+addr+" (hosted by rank 0): rank 2 of 3 did not arrive within 1s", "rank %d", r)
	}
	assert.Less(t, time.Since(start), 6*time.Second, "the timeout (1s) and a margin")
}

func TestProcessesWithWorldSizesThatDisagree(t *testing.T) {
	addr := freeAddr(t)
	start := time.Now()
	zero := startRank(t, "ok", gocudaVars(0, 2, "job-sizes", append(masterVars(addr), "GOCUDA_RENDEZVOUS_TIMEOUT=20s")...)...)
	one := startRank(t, "ok", gocudaVars(1, 3, "job-sizes", append(masterVars(addr), "GOCUDA_RENDEZVOUS_TIMEOUT=20s")...)...)
	code, out := one.wait(t, 20*time.Second)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "this rank was started with world size 3 and rank 0 with 2: every rank must be started with the same world size")
	code, out = zero.wait(t, 20*time.Second)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "was refused by the rendezvous: this rank was started with world size 3", "rank 0 hears why, before its timeout")
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestProcessesOfAnotherJobAreRefused(t *testing.T) {
	s, err := Listen("127.0.0.1:0", "job-now", 2)
	require.NoError(t, err)
	defer s.Close()
	p := startRank(t, "ok", gocudaVars(1, 2, "job-before", "GOCUDA_RENDEZVOUS="+s.Addr(), "GOCUDA_RENDEZVOUS_TIMEOUT=20s")...)
	code, out := p.wait(t, 10*time.Second)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `this rendezvous serves job "job-now"; this rank came with job "job-before": is it a leftover of an earlier run?`)
}

func TestProcessRankZeroOnAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	p := startRank(t, "ok", gocudaVars(0, 2, "job-port", append(masterVars(ln.Addr().String()), "GOCUDA_RENDEZVOUS_TIMEOUT=20s")...)...)
	code, out := p.wait(t, 10*time.Second)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "rendezvous: rank 0 of 2 hosts the rendezvous and cannot listen on "+ln.Addr().String()+" (is another job, or an earlier run of this one, using the port? does the host name this machine?)")
	assert.Contains(t, out, "address already in use")
}

func TestProcessesStartedAsTheSameRank(t *testing.T) {
	s, err := Listen("127.0.0.1:0", "job-dup", 2)
	require.NoError(t, err)
	defer s.Close()
	vars := gocudaVars(1, 2, "job-dup", "GOCUDA_RENDEZVOUS="+s.Addr(), "GOCUDA_RENDEZVOUS_TIMEOUT=20s")
	first := startRank(t, "ok", vars...)
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.members[1] != nil
	}, 10*time.Second, 5*time.Millisecond)
	second := startRank(t, "ok", vars...)
	code, out := second.wait(t, 10*time.Second)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, fmt.Sprintf(", pid %d; this process is host ", first.cmd.Process.Pid))
	assert.Contains(t, out, fmt.Sprintf(", pid %d: two processes were started as rank 1", second.cmd.Process.Pid))
	code, out = first.wait(t, 10*time.Second)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "two processes were started as rank 1", "the first hears it, before its timeout")
}
