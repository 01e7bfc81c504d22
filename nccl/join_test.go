package nccl_test

import (
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
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/rendezvous"
)

// childVar makes the test binary a rank of TestJoinFromEnvAcrossProcesses
// instead of running the tests; its value is the scenario.
const childVar = "GN_NCCL_TEST_CHILD"

func TestMain(m *testing.M) {
	if sc := os.Getenv(childVar); sc != "" {
		if err := joinedRank(sc); err != nil {
			fmt.Fprintln(os.Stderr, "rank failed:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// clearLaunchers unsets every launcher's variables for the test, so that a
// test run under a launcher (or with MASTER_ADDR set) sees only its own.
func clearLaunchers(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, p := range []string{"GOCUDA_RANK", "GOCUDA_WORLD_SIZE", "GOCUDA_LOCAL_RANK", "GOCUDA_RENDEZVOUS", "GOCUDA_JOB",
			"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_", "OMPI_COMM_WORLD_", "SLURM_"} {
			if k == p || (strings.HasSuffix(p, "_") && strings.HasPrefix(k, p)) {
				t.Setenv(k, "") // restored after the test
				require.NoError(t, os.Unsetenv(k))
			}
		}
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func TestJoinFromEnvWithoutALauncherIsAClearError(t *testing.T) {
	clearLaunchers(t)
	b, _ := devices(t, 1)
	_, err := nccl.JoinFromEnv(t.Context(), b)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "gocuda launch, torchrun, srun or mpirun")
}

// A job of one rank needs no peer: the rendezvous (hosted by rank 0 at
// MASTER_ADDR:MASTER_PORT) and the communicator work on either backend.
func TestJoinFromEnvOfOneRank(t *testing.T) {
	clearLaunchers(t)
	b, devs := devices(t, 1)
	t.Setenv("GOCUDA_RANK", "0")
	t.Setenv("GOCUDA_WORLD_SIZE", "1")
	t.Setenv("MASTER_ADDR", "127.0.0.1")
	t.Setenv("MASTER_PORT", freePort(t))
	c, err := nccl.JoinFromEnv(t.Context(), b)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Rank())
	assert.Equal(t, 1, c.Size())
	assert.Equal(t, devs[0].Ordinal(), c.Device().Ordinal())
	s := stream(t, c.Device())
	p := buf(t, c.Device(), s, []byte{1, 0, 0, 0, 2, 0, 0, 0})
	require.NoError(t, c.AllReduce(p, p, 2, nccl.Int32, nccl.Sum, s))
	require.NoError(t, s.Synchronize())
	require.NoError(t, c.Err())
	require.NoError(t, c.Destroy())
}

func TestJoinFromEnvRefusesProcessRanksOnTheHostBackend(t *testing.T) {
	hostOnly(t, "the host backend's ranks are goroutines of one process")
	clearLaunchers(t)
	b, _ := devices(t, 2)
	t.Setenv("GOCUDA_RANK", "1")
	t.Setenv("GOCUDA_WORLD_SIZE", "2")
	t.Setenv("MASTER_ADDR", "127.0.0.1") // refused before anything listens or dials
	t.Setenv("MASTER_PORT", "29500")
	_, err := nccl.JoinFromEnv(t.Context(), b)
	require.ErrorIs(t, err, backend.ErrNotSupported)
	assert.Contains(t, err.Error(), "rank 1 of 2")
}

// TestJoinFromEnvAcrossProcesses runs two ranks as processes (this test
// binary again), one GPU each, meeting at a rendezvous the test serves as
// gocuda launch would: they all-reduce and leave; and when rank 1 dies
// after joining, rank 0's collective is aborted within a bound, with an
// error that names rank 1.
func TestJoinFromEnvAcrossProcesses(t *testing.T) {
	if !onGPU() {
		t.Skip("needs GPUs: on the host backend a communicator's ranks are goroutines of one process")
	}
	devices(t, 2) // skips with fewer than two GPUs or no NCCL
	clearLaunchers(t)
	for _, tc := range []struct {
		scenario string
		want     [2]string // what each rank's output must contain
	}{
		{"allreduce", [2]string{"sum ok", "sum ok"}},
		{"rank1dies", [2]string{"aborted, naming rank 1", ""}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			job := fmt.Sprintf("test-%d", time.Now().UnixNano())
			srv, err := rendezvous.Listen("127.0.0.1:0", job, 2)
			require.NoError(t, err)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			cmds := make([]*exec.Cmd, 2)
			outs := make([]strings.Builder, 2)
			for r := range 2 {
				cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
				cmd.Env = append(nccl.Environ(os.Environ()), childVar+"="+tc.scenario, "GOCUDA_BACKEND=cuda",
					"GOCUDA_RANK="+strconv.Itoa(r), "GOCUDA_WORLD_SIZE=2", "GOCUDA_LOCAL_RANK="+strconv.Itoa(r),
					"GOCUDA_RENDEZVOUS="+srv.Addr(), "GOCUDA_JOB="+job)
				cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
				require.NoError(t, cmd.Start())
				cmds[r] = cmd
			}
			start := time.Now()
			errs := [2]error{cmds[0].Wait(), cmds[1].Wait()}
			took := time.Since(start)
			for r := range 2 {
				t.Logf("rank %d (%v):\n%s", r, errs[r], outs[r].String())
			}
			require.NoError(t, errs[0], "rank 0")
			if tc.scenario == "allreduce" {
				require.NoError(t, errs[1], "rank 1")
			} else {
				var ee *exec.ExitError
				require.ErrorAs(t, errs[1], &ee, "rank 1 exits on purpose")
				assert.Equal(t, 3, ee.ExitCode())
			}
			for r, w := range tc.want {
				assert.Contains(t, outs[r].String(), w, "rank %d", r)
			}
			assert.Less(t, took, 60*time.Second)
		})
	}
}

// joinedRank is one rank of TestJoinFromEnvAcrossProcesses.
func joinedRank(scenario string) error {
	b, err := auto.Default()
	if err != nil {
		return err
	}
	c, err := nccl.JoinFromEnv(context.Background(), b)
	if err != nil {
		return err
	}
	dev := c.Device()
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Destroy()
	p, err := dev.Alloc(4 * 1024)
	if err != nil {
		return err
	}
	defer dev.Free(p)
	if err := dev.Memset32(p, uint32(c.Rank()+1), 1024, s); err != nil {
		return err
	}
	if scenario == "rank1dies" && c.Rank() == 1 {
		os.Exit(3) // after joining, without leaving: as a crash would
	}
	// NCCL connects to the peers at a collective's first call: with rank
	// 1 gone, the call itself may fail; else its stream is released by
	// the abort, and Err says why.
	err = c.AllReduce(p, p, 1024, nccl.Int32, nccl.Sum, s)
	if err == nil {
		if err = s.Synchronize(); err == nil {
			err = c.Err()
		}
	}
	if err != nil {
		if scenario == "rank1dies" && strings.Contains(err.Error(), "rank 1") {
			fmt.Println("aborted, naming rank 1:", err)
			return nil
		}
		return err
	}
	if scenario == "rank1dies" {
		return errors.New("the all-reduce finished though rank 1 died")
	}
	got := make([]byte, 4*1024)
	if err := dev.CopyDtoH(unsafe.Pointer(&got[0]), p, uint64(len(got)), s); err != nil {
		return err
	}
	for i := 0; i < len(got); i += 4 {
		if v := int(got[i]) | int(got[i+1])<<8 | int(got[i+2])<<16 | int(got[i+3])<<24; v != 3 {
			return fmt.Errorf("element %d is %d, want 1+2", i/4, v)
		}
	}
	fmt.Println("sum ok")
	return c.Destroy()
}
