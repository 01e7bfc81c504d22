//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/rendezvous"
)

// The test binary is also the program gocuda launch starts (a rank plays
// the scenario in launchScenario) and, for the tests that signal the
// launcher itself, the gocuda command (launchCLI).
const (
	launchScenario = "GOCUDA_TEST_LAUNCH_SCENARIO"
	launchCLI      = "GOCUDA_TEST_LAUNCH_CLI"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(launchScenario); s != "" && os.Getenv("GOCUDA_RANK") != "" {
		os.Exit(launchedRank(s))
	}
	if os.Getenv(launchCLI) != "" {
		main() // os.Args[1:] is the command line
		return
	}
	os.Exit(m.Run())
}

// launchedRank is one rank that gocuda launch started.
func launchedRank(scenario string) int {
	l, ok, err := rendezvous.FromEnv(os.LookupEnv)
	if err != nil || !ok {
		fmt.Printf("launch: ok %v, %v\n", ok, err)
		return 2
	}
	ctx := context.Background()
	join := func() *rendezvous.Member {
		m, err := rendezvous.Join(ctx, l, rendezvous.Options{Timeout: 20 * time.Second})
		if err != nil {
			fmt.Printf("rank %d: %v\n", l.Rank, err)
			os.Exit(1)
		}
		return m
	}
	switch scenario {
	case "ok":
		m := join()
		defer m.Close()
		v, err := m.Share(ctx, "word", func() ([]byte, error) { return []byte("from rank 0"), nil })
		if err == nil {
			err = m.Barrier(ctx, "end")
		}
		if err != nil {
			fmt.Printf("rank %d: %v\n", l.Rank, err)
			return 1
		}
		fmt.Printf("rank %d of %d, local %d, %s, NCCL_NVLS_ENABLE=%s, job %s: %s\n", l.Rank, l.Size, l.LocalRank,
			l.Launcher, os.Getenv("NCCL_NVLS_ENABLE"), l.Job, v)
	case "fail1":
		if l.Rank == 1 {
			return 3
		}
		time.Sleep(time.Minute) // until stopped
	case "selfkill":
		if l.Rank == 1 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		time.Sleep(time.Minute)
	case "sleep":
		time.Sleep(time.Minute)
	case "term":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Printf("rank %d ready\n", l.Rank)
		select {
		case <-c:
			fmt.Printf("rank %d got SIGTERM\n", l.Rank)
		case <-time.After(time.Minute):
			return 1
		}
	case "stubborn":
		if l.Rank == 0 {
			signal.Ignore(syscall.SIGTERM)
		}
		// Once both are past the barrier, rank 0 ignores SIGTERM. Rank 1's
		// exit may cut rank 0's barrier short: rank 0 sleeps either way.
		join().Barrier(ctx, "ready")
		if l.Rank == 1 {
			return 1
		}
		time.Sleep(time.Minute)
	}
	return 0
}

// lockedBuffer collects output written by several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// rankEnv is this process's environment without any launcher's
// variables, and with the scenario.
func rankEnv(scenario string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOCUDA_TEST_LAUNCH") {
			env = append(env, kv)
		}
	}
	if os.Getenv("GORACE") == "" {
		// The race detector waits 1 s at exit by default: every rank
		// would.
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return append(env, launchScenario+"="+scenario)
}

// launchIn runs launch in this process with the test binary as the
// program, and returns the exit code, the output and how long it took.
func launchIn(t *testing.T, ctx context.Context, scenario string, n int, grace time.Duration) (int, string, time.Duration) {
	t.Helper()
	var out lockedBuffer
	start := time.Now()
	code, err := launch(ctx, launchConfig{n: n, addr: "127.0.0.1:0", grace: grace, prog: os.Args[0], args: []string{"-test.run=^$"},
		env: rankEnv(scenario), stdout: &out, stderr: &out})
	require.NoError(t, err)
	return code, out.String(), time.Since(start)
}

func TestLaunchStartsRanksThatMeetAtItsRendezvous(t *testing.T) {
	code, out, _ := launchIn(t, context.Background(), "ok", 3, 5*time.Second)
	require.Equal(t, 0, code, out)
	for r := range 3 {
		assert.Regexp(t, fmt.Sprintf(`rank %d of 3, local %d, gocuda, NCCL_NVLS_ENABLE=0, job launch-[0-9a-f]{16}: from rank 0\n`, r, r), out)
	}
	assert.NotContains(t, out, "gocuda launch:", "nothing to say when every rank succeeds")
}

func TestLaunchEndsAsTheFailedRankDid(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		code     int
		line     string
	}{
		{"fail1", 3, "gocuda launch: rank 1 exited with code 3; stopping the other ranks (SIGTERM, then SIGKILL after 5s)\n"},
		{"selfkill", 128 + 9, "gocuda launch: rank 1 was killed by signal 9 (killed); stopping the other ranks"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			code, out, took := launchIn(t, context.Background(), tc.scenario, 3, 5*time.Second)
			assert.Equal(t, tc.code, code, out)
			assert.Contains(t, out, tc.line)
			assert.Equal(t, 1, strings.Count(out, "gocuda launch:"), "one line: the ranks stopped are not reported:\n%s", out)
			assert.Less(t, took, 4*time.Second, "the others stop at SIGTERM, well before the grace")
		})
	}
}

func TestLaunchKillsARankThatIgnoresSIGTERMAfterTheGrace(t *testing.T) {
	const grace = 500 * time.Millisecond
	code, out, took := launchIn(t, context.Background(), "stubborn", 2, grace)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "gocuda launch: rank 1 exited with code 1; stopping the other ranks")
	assert.Contains(t, out, "gocuda launch: rank 0 is still running 500ms after SIGTERM: SIGKILL\n")
	assert.GreaterOrEqual(t, took, grace)
	assert.Less(t, took, grace+5*time.Second)
}

func TestLaunchStopsTheRanksWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	code, out, took := launchIn(t, ctx, "sleep", 2, 5*time.Second)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "gocuda launch: stopped; stopping the other ranks")
	assert.Less(t, took, 4*time.Second)
}

// cliLaunch starts this test binary as "gocuda launch ARGS...", its
// ranks the test binary again.
func cliLaunch(t *testing.T, scenario string, args ...string) (*exec.Cmd, io.Reader, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a backstop only
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"launch"}, append(args, "--", os.Args[0], "-test.run=^$")...)...)
	cmd.Env = append(rankEnv(scenario), launchCLI+"=1")
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, stdout, &errOut
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

func TestLaunchPassesSIGTERMToTheRanks(t *testing.T) {
	cmd, stdout, errOut := cliLaunch(t, "term", "-n", "2")
	lines := bufio.NewScanner(stdout)
	ready := 0
	for ready < 2 && lines.Scan() {
		if strings.HasSuffix(lines.Text(), " ready") {
			ready++
		}
	}
	require.Equal(t, 2, ready, errOut.String())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	code := exitCode(t, cmd.Wait())
	assert.Equal(t, 128+int(syscall.SIGTERM), code, errOut.String())
	assert.ElementsMatch(t, []string{"rank 0 got SIGTERM", "rank 1 got SIGTERM"}, rest)
	assert.Contains(t, errOut.String(), "gocuda launch: SIGTERM: passed to the ranks; SIGKILL after 10s\n")
}

func TestLaunchCommandExitsWithTheRanksCode(t *testing.T) {
	cmd, stdout, errOut := cliLaunch(t, "fail1", "-n", "2", "--grace", "5s")
	io.Copy(io.Discard, stdout)
	start := time.Now()
	assert.Equal(t, 3, exitCode(t, cmd.Wait()), errOut.String())
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, "gocuda launch: rank 1 exited with code 3; stopping the other ranks (SIGTERM, then SIGKILL after 5s)\n", errOut.String())
}

func TestLaunchUsageMistakes(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"launch"}, "gocuda launch: no program given: gocuda launch -n 2 -- ./prog [args]"},
		{[]string{"launch", "-n", "0", "x"}, "gocuda launch: -n 0: give at least 1 rank"},
		{[]string{"launch", "--gracee", "1s", "x"}, `gocuda launch: unknown flag "--gracee"; did you mean "--grace"? run "gocuda launch --help" for its flags`},
		{[]string{"launch", "-n", "2", "--grace", "0s", "x"}, "--grace 0s: give a positive duration"},
		{[]string{"launch", "-n", "2", "--addr", "localhost", "x"}, `--addr "localhost": give host:port`},
		{[]string{"launch", "-n", "2", "--", "no-such-program-xyz"}, `gocuda launch: program "no-such-program-xyz": exec: "no-such-program-xyz": executable file not found in $PATH`},
	}
	if b, err := gocuda.Backend(); err == nil && b.Name() == "host" {
		tests = append(tests, struct {
			args []string
			want string
		}{[]string{"launch", "./prog"}, "gocuda launch: -n is needed: by default a rank is started per GPU, and the host backend has none here; give -n N"})
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
			assert.Contains(t, stderr, `"gocuda launch --help"`)
		})
	}
}

func TestLaunchHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "launch", "--help")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	for _, want := range []string{"Usage: gocuda launch [-n N] [--addr HOST:PORT] [--grace D] [--] PROGRAM [ARGS...]", "-grace", "-addr", "nccl.JoinFromEnv"} {
		assert.Contains(t, stdout, want)
	}
}

func TestLaunchAddrInUseIsAnError(t *testing.T) {
	s, err := rendezvous.Listen("127.0.0.1:0", "other", 1)
	require.NoError(t, err)
	defer s.Close()
	_, err = launch(context.Background(), launchConfig{n: 1, addr: s.Addr(), grace: time.Second, prog: os.Args[0], env: rankEnv("ok"),
		stdout: io.Discard, stderr: io.Discard})
	assert.ErrorContains(t, err, "rendezvous: cannot listen on "+s.Addr())
}
