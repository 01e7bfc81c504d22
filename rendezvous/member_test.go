package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
)

// noLeaks fails the test if goroutines it started outlive it (by 3 s);
// call it first, so that its check runs after the other cleanups.
func noLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func launchesAt(addr, job string, size int, h Hosting) []Launch {
	ls := make([]Launch, size)
	for r := range ls {
		ls[r] = Launch{Launcher: "gocuda", Rank: r, Size: size, LocalRank: r, Addr: addr, Job: job, Hosting: h}
	}
	return ls
}

// joinAll joins every launch at once, as the ranks' processes would.
func joinAll(ctx context.Context, ls []Launch, opts Options) ([]*Member, []error) {
	ms, errs := make([]*Member, len(ls)), make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i], errs[i] = Join(ctx, l, opts)
		}()
	}
	wg.Wait()
	return ms, errs
}

// each runs f for every member at once and returns its errors.
func each(ms []*Member, f func(m *Member) error) []error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(m)
		}()
	}
	wg.Wait()
	return errs
}

func closeAll(ms []*Member) {
	each(ms, func(m *Member) error {
		if m != nil {
			m.Close()
		}
		return nil
	})
}

// hostings are the three ways a rendezvous is served, each as a test
// sets it up: the address and who hosts it.
func hostings(t *testing.T, job string, size int) map[string][]Launch {
	launcher := testServer(t, job, size, nil)
	torch := testServer(t, job, size, func(s *Server) { s.requireHello = false })
	return map[string][]Launch{
		"gocuda launch":    launchesAt(launcher.Addr(), job, size, HostedByLauncher),
		"rank 0":           launchesAt(freeAddr(t), job, size, HostedByRankZero),
		"torchrun's agent": launchesAt(torch.Addr(), job, size, HostedByTorchAgent),
	}
}

func TestJoinShareBarrierClose(t *testing.T) {
	noLeaks(t)
	for name, ls := range hostings(t, "job-1", 3) {
		t.Run(name, func(t *testing.T) {
			ctx := bounded(t)
			ms, errs := joinAll(ctx, ls, Options{Timeout: 10 * time.Second})
			defer closeAll(ms)
			for r, err := range errs {
				require.NoError(t, err, "rank %d", r)
				assert.Equal(t, r, ms[r].Rank())
				assert.Equal(t, 3, ms[r].Size())
				assert.Equal(t, ls[r], ms[r].Launch())
			}
			got := make([]string, 3)
			errs = each(ms, func(m *Member) error {
				v, err := m.Share(ctx, "id", func() ([]byte, error) { return []byte("made by rank 0"), nil })
				got[m.Rank()] = string(v)
				for range 2 { // a barrier's name may be passed again
					if err == nil {
						err = m.Barrier(ctx, "step")
					}
				}
				return err
			})
			for r, err := range errs {
				require.NoError(t, err, "rank %d", r)
				assert.Equal(t, "made by rank 0", got[r])
			}
			for r, err := range each(ms, func(m *Member) error { return m.Close() }) {
				require.NoError(t, err, "rank %d", r)
			}
			for r, m := range ms {
				select {
				case <-m.Failed():
					t.Errorf("rank %d: Failed closed after a clean Close: %v", r, m.Err())
				default:
				}
				assert.NoError(t, m.Err())
			}
		})
	}
}

func TestShareCarriesRankZerosErrorAndRefusesAKeyTwice(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "j", 2, nil)
	ctx := bounded(t)
	ms, errs := joinAll(ctx, launchesAt(s.Addr(), "j", 2, HostedByLauncher), Options{Timeout: 5 * time.Second})
	require.NoError(t, errors.Join(errs...))
	defer closeAll(ms)
	errs = each(ms, func(m *Member) error {
		_, err := m.Share(ctx, "id", func() ([]byte, error) { return nil, errors.New("no GPU here") })
		return err
	})
	assert.ErrorContains(t, errs[0], `rendezvous: Share "id": no GPU here`)
	assert.ErrorContains(t, errs[1], `Share "id": rank 0 could not make the value: no GPU here`)

	_, err := ms[0].Share(ctx, "id", func() ([]byte, error) { return []byte("again"), nil })
	assert.ErrorContains(t, err, `Share "id": a value was shared under this key already: give each Share its own key`)
	_, err = ms[0].Share(ctx, "big", func() ([]byte, error) { return make([]byte, maxValue), nil })
	assert.ErrorContains(t, err, "the value is 1048576 bytes; at most 1048575 can be shared")
}

func TestBarrierTimeoutNamesTheRanksMissing(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "j", 3, nil)
	ctx := bounded(t)
	ms, errs := joinAll(ctx, launchesAt(s.Addr(), "j", 3, HostedByLauncher), Options{Timeout: 300 * time.Millisecond})
	require.NoError(t, errors.Join(errs...))
	defer closeAll(ms)
	start := time.Now()
	errs = each(ms[:2], func(m *Member) error { return m.Barrier(ctx, "epoch") })
	assert.Less(t, time.Since(start), 3*time.Second)
	for _, err := range errs {
		require.ErrorIs(t, err, ErrTimeout)
		assert.Contains(t, err.Error(), `(hosted by gocuda launch): barrier "epoch": rank 2 of 3 did not arrive within 300ms`)
	}
	// The Share rank 0 never makes: the others' error names key and rank 0.
	_, err := ms[1].Share(ctx, "never", nil)
	assert.ErrorContains(t, err, `Share "never": rank 0 did not share it within 300ms`)
}

func TestJoinTimeoutNamesTheRanksMissing(t *testing.T) {
	noLeaks(t)
	for name, ls := range hostings(t, "j", 4) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, errs := joinAll(bounded(t), []Launch{ls[0], ls[2]}, Options{Timeout: 300 * time.Millisecond})
			assert.Less(t, time.Since(start), 5*time.Second)
			for _, err := range errs {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "ranks 1 and 3 of 4 did not arrive within 300ms")
				assert.Contains(t, err.Error(), "(hosted by "+name+")")
			}
		})
	}
}

func TestFailReachesEveryRankAndEndsTheirCalls(t *testing.T) {
	noLeaks(t)
	for name, ls := range hostings(t, "j", 3) {
		t.Run(name, func(t *testing.T) {
			ctx := bounded(t)
			ms, errs := joinAll(ctx, ls, Options{Timeout: 10 * time.Second})
			require.NoError(t, errors.Join(errs...))
			defer closeAll(ms)
			shareErr := make(chan error, 1)
			go func() {
				_, err := ms[2].Share(ctx, "never", nil) // rank 0 never shares it
				shareErr <- err
			}()
			time.Sleep(20 * time.Millisecond)
			ms[1].Fail(errors.New("out of memory"))
			host, _ := os.Hostname()
			want := fmt.Sprintf("rank 1 (host %s, pid %d): out of memory", host, os.Getpid())
			for _, r := range []int{0, 2, 1} {
				select {
				case <-ms[r].Failed():
				case <-time.After(3 * time.Second):
					t.Fatalf("rank %d did not hear of rank 1's failure within 3s", r)
				}
				require.ErrorIs(t, ms[r].Err(), ErrFailed)
				assert.Equal(t, want, ms[r].Err().Error())
			}
			select {
			case err := <-shareErr:
				assert.Equal(t, want, err.Error(), "a call in flight ends with the failure")
			case <-time.After(3 * time.Second):
				t.Fatal("rank 2's Share did not end within 3s of the failure")
			}
			// The first failure wins.
			ms[0].Fail(errors.New("later"))
			_, err := ms[0].Share(ctx, "after", func() ([]byte, error) { return nil, nil })
			assert.ErrorContains(t, err, "rank 1")
		})
	}
}

func TestARankStartedTwiceIsNamed(t *testing.T) {
	noLeaks(t)
	// Through COMPARE_SET, as on torch's agent (our server refuses the
	// second HELLO already: TestServerRefusesARankConnectedTwice).
	s := testServer(t, "j", 2, func(s *Server) { s.requireHello = false })
	ls := launchesAt(s.Addr(), "j", 2, HostedByTorchAgent)
	ctx := bounded(t)
	first := make(chan error, 1)
	go func() {
		m, err := Join(ctx, ls[1], Options{Timeout: 5 * time.Second})
		if m != nil {
			m.Close()
		}
		first <- err
	}()
	probe := testClient(t, s, "j", 0, 2, roleWatcher)
	require.Eventually(t, func() bool {
		ok, err := probe.check(ctx, []string{keyPrefix("j") + rankKey(1)})
		return err == nil && ok
	}, 3*time.Second, 5*time.Millisecond)
	_, err := Join(ctx, ls[1], Options{Timeout: 5 * time.Second})
	host, _ := os.Hostname()
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("rank 1 is taken: host %s, pid %d joined as rank 1 already; this process is host %[1]s, pid %[2]d: two processes were started as rank 1", host, os.Getpid()))
	select {
	case err := <-first:
		assert.ErrorContains(t, err, "two processes were started as rank 1", "the first hears it too")
	case <-time.After(3 * time.Second):
		t.Fatal("the first rank 1 did not hear of the second within 3s")
	}
}

func TestWorldSizesThatDisagreeAreNamed(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "j", 2, func(s *Server) { s.requireHello = false })
	ctx := bounded(t)
	zero := make(chan error, 1)
	go func() {
		m, err := Join(ctx, launchesAt(s.Addr(), "j", 2, HostedByTorchAgent)[0], Options{Timeout: 5 * time.Second})
		if m != nil {
			m.Close()
		}
		zero <- err
	}()
	probe := testClient(t, s, "j", 0, 2, roleWatcher)
	require.Eventually(t, func() bool {
		ok, err := probe.check(ctx, []string{keyPrefix("j") + keySize})
		return err == nil && ok
	}, 3*time.Second, 5*time.Millisecond)
	_, err := Join(ctx, launchesAt(s.Addr(), "j", 4, HostedByTorchAgent)[1], Options{Timeout: 5 * time.Second})
	host, _ := os.Hostname()
	assert.ErrorContains(t, err, fmt.Sprintf("this rank (1) was started with world size 4 and rank 0 (host %s, pid %d) with 2: every rank must be started with the same world size", host, os.Getpid()))
	assert.ErrorContains(t, <-zero, "was started with world size 4")
}

func TestJoinNamesAnAddressWhereNobodyListens(t *testing.T) {
	noLeaks(t)
	addr := freeAddr(t)
	start := time.Now()
	_, err := Join(bounded(t), launchesAt(addr, "j", 2, HostedByLauncher)[1], Options{Timeout: 300 * time.Millisecond})
	assert.Less(t, time.Since(start), 3*time.Second)
	require.ErrorIs(t, err, ErrTimeout)
	assert.Contains(t, err.Error(), "rendezvous at "+addr+" (hosted by gocuda launch): could not connect within 300ms: is gocuda launch running, and is "+addr+" its address?")
	assert.Contains(t, err.Error(), "connection refused")
}

func TestJoinIsRefusedForAnotherJobAtOnce(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "job-now", 2, nil)
	start := time.Now()
	_, err := Join(bounded(t), launchesAt(s.Addr(), "job-before", 2, HostedByLauncher)[1], Options{Timeout: 5 * time.Second})
	assert.Less(t, time.Since(start), 2*time.Second, "a refusal is not retried")
	assert.ErrorContains(t, err, `(hosted by gocuda launch) refused rank 1 (host `)
	assert.ErrorContains(t, err, `this rendezvous serves job "job-now"; this rank came with job "job-before": is it a leftover of an earlier run?`)
}

func TestJoinEndsWithTheCallersContext(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "j", 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Join(ctx, launchesAt(s.Addr(), "j", 2, HostedByLauncher)[0], Options{Timeout: 10 * time.Second})
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestJoinTakesItsTimeoutFromTheEnvironment(t *testing.T) {
	s := testServer(t, "j", 2, nil)
	l := launchesAt(s.Addr(), "j", 2, HostedByLauncher)[0]
	t.Setenv(config.EnvRendezvousTimeout, "soon")
	_, err := Join(bounded(t), l, Options{})
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, config.EnvRendezvousTimeout, ce.Var)
	assert.Contains(t, err.Error(), `GOCUDA_RENDEZVOUS_TIMEOUT="soon" is not valid: accepted values are a Go duration of at least 100ms`)

	t.Setenv(config.EnvRendezvousTimeout, "200ms")
	_, err = Join(bounded(t), l, Options{})
	assert.ErrorContains(t, err, "rank 1 of 2 did not arrive within 200ms")

	_, err = Join(bounded(t), l, Options{Timeout: -time.Second})
	assert.ErrorContains(t, err, "Options.Timeout -1s: give a positive duration")
}

func TestJoinChecksItsLaunch(t *testing.T) {
	for _, tc := range []struct {
		l    Launch
		want string
	}{
		{Launch{Rank: 0, Size: 0, Addr: "h:1"}, "world size 0: give 1 to"},
		{Launch{Rank: 2, Size: 2, Addr: "h:1"}, "rank 2 of 2: the ranks are 0 to 1"},
		{Launch{Rank: -1, Size: 2, Addr: "h:1"}, "rank -1 of 2"},
		{Launch{Rank: 0, Size: 2, Addr: "h"}, `address "h": give host:port`},
		{Launch{Rank: 0, Size: 2, Addr: "h:0"}, "port 0 would let rank 0 pick a port that no other rank knows"},
		{Launch{Rank: 0, Size: 1, Addr: "h:1", Hosting: 9}, "Hosting(9): give HostedByRankZero"},
	} {
		_, err := Join(bounded(t), tc.l, Options{Timeout: time.Second})
		assert.ErrorContains(t, err, tc.want, "%+v", tc.l)
	}
}

func TestAJobOfOneRankNeedsNoPeer(t *testing.T) {
	noLeaks(t)
	l, ok, err := FromEnv(lookupIn(map[string]string{"GOCUDA_RANK": "0", "GOCUDA_WORLD_SIZE": "1"}))
	require.NoError(t, err)
	require.True(t, ok)
	m, err := Join(bounded(t), l, Options{Timeout: 5 * time.Second})
	require.NoError(t, err)
	v, err := m.Share(bounded(t), "id", func() ([]byte, error) { return []byte{1, 2}, nil })
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2}, v)
	require.NoError(t, m.Barrier(bounded(t), "b"))
	require.NoError(t, m.Close())
}

// When the server goes away, every member hears it; Close is then quick.
func TestARendezvousThatGoesAwayIsHeard(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "j", 2, nil)
	ms, errs := joinAll(bounded(t), launchesAt(s.Addr(), "j", 2, HostedByLauncher), Options{Timeout: 5 * time.Second})
	require.NoError(t, errors.Join(errs...))
	require.NoError(t, s.Close())
	for r, m := range ms {
		select {
		case <-m.Failed():
		case <-time.After(3 * time.Second):
			t.Fatalf("rank %d did not hear within 3s", r)
		}
		require.ErrorIs(t, m.Err(), ErrGone)
		assert.Contains(t, m.Err().Error(), "rendezvous at "+s.Addr()+" (hosted by gocuda launch) is gone")
		start := time.Now()
		m.Close()
		assert.Less(t, time.Since(start), 2*time.Second)
	}
}

// The hosting rank 0 stops serving only once the others left, so that
// none is told the rendezvous vanished.
func TestTheHostingRankWaitsForTheOthersToLeave(t *testing.T) {
	noLeaks(t)
	ms, errs := joinAll(bounded(t), launchesAt(freeAddr(t), "j", 2, HostedByRankZero), Options{Timeout: 10 * time.Second})
	require.NoError(t, errors.Join(errs...))
	closed := make(chan error, 1)
	go func() { closed <- ms[0].Close() }()
	select {
	case <-closed:
		t.Fatal("rank 0 stopped serving while rank 1 was still there")
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, ms[1].Close())
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(3 * time.Second):
		t.Fatal("rank 0's Close did not return within 3s of rank 1 leaving")
	}
	assert.NoError(t, ms[1].Err())
	assert.NoError(t, ms[0].Err())
	_, err := ms[0].Share(bounded(t), "x", nil)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestAMemberFailingAfterRank0LeftIsNotAPanic(t *testing.T) {
	noLeaks(t)
	s := testServer(t, "j", 1, nil)
	m, err := Join(bounded(t), launchesAt(s.Addr(), "j", 1, HostedByLauncher)[0], Options{Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	m.Fail(errors.New("after close")) // no effect, no panic
	require.NoError(t, m.Close(), "Close twice")
	assert.NoError(t, m.Err())
	assert.False(t, strings.Contains(fmt.Sprint(m.Err()), "after close"))
}
