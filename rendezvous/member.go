package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocuda/gocuda/config"
)

// Options tune Join.
type Options struct {
	// Timeout bounds joining (every rank must arrive within it, counted
	// from this rank's Join) and each Share and Barrier. 0 takes
	// GOCUDA_RENDEZVOUS_TIMEOUT, 2 minutes when that is unset.
	Timeout time.Duration
}

// The kinds of error a Member reports; errors.Is tells them apart.
var (
	// ErrTimeout: ranks did not arrive, or rank 0 did not share, within
	// the timeout. The error names the ranks.
	ErrTimeout = errors.New("rendezvous: timed out")
	// ErrFailed: a rank failed (Fail, or its process ended before it
	// left). The error names it and says why.
	ErrFailed = errors.New("rendezvous: a rank failed")
	// ErrGone: the rendezvous went away (its host exited, or the network
	// to it failed).
	ErrGone = errors.New("rendezvous: the rendezvous is gone")
	// ErrClosed: the Member was closed.
	ErrClosed = errors.New("rendezvous: the member is closed")
)

// kindError is an error of one of the kinds above with its own text.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// Bounds of the waits that Options.Timeout does not cover.
const (
	dialTimeout  = 5 * time.Second  // one connection attempt
	failTimeout  = 10 * time.Second // telling the others of a failure, leaving
	nameTimeout  = 5 * time.Second  // finding which ranks are missing, after a timeout
	drainTimeout = 30 * time.Second // the hosting rank waiting for the others to leave
)

// Member is this process's place in a job's rendezvous, from Join to
// Close. Its methods are safe for concurrent use; Share and Barrier run
// one at a time.
type Member struct {
	l       Launch
	addr    string // where it connects (rank 0's own server's, with its port)
	timeout time.Duration
	host    string
	pid     int
	srv     *Server // the server this rank hosts (HostedByRankZero, rank 0)

	sem      chan struct{} // held by the call using conn
	conn     *client
	barriers map[string]int // how many times each barrier was passed (under sem)
	closed   bool           // under sem

	// ops ends on Fail, Close or a failure heard, cutting short the
	// calls in flight.
	ops     context.Context
	stopOps context.CancelCauseFunc

	watcher   *client
	watchDone chan struct{}
	failed    chan struct{}
	heardOnce sync.Once
	errMu     sync.Mutex
	err       error

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// errOurTimeout marks a context that ended at Options.Timeout.
var errOurTimeout = errors.New("rendezvous timeout")

// Join meets the job's other ranks at the rendezvous l names: rank 0
// starts serving it when l.Hosting is HostedByRankZero. It returns once
// every rank has arrived, or with an error naming the ranks that did not
// within the timeout, or the rank that failed meanwhile. ctx bounds the
// join too; it does not bound the Member's life.
func Join(ctx context.Context, l Launch, opts Options) (*Member, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	timeout, err := resolveTimeout(opts.Timeout)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	m := &Member{l: l, addr: l.Addr, timeout: timeout, host: host, pid: os.Getpid(),
		sem: make(chan struct{}, 1), barriers: map[string]int{}, failed: make(chan struct{})}
	m.ops, m.stopOps = context.WithCancelCause(context.Background())
	jctx, cancel := context.WithTimeoutCause(ctx, timeout, errOurTimeout)
	defer cancel()

	if l.Hosting == HostedByRankZero && l.Rank == 0 {
		if m.srv, err = listen(l.Addr, l.Job, l.Size, "rank 0"); err != nil {
			return nil, fmt.Errorf("rendezvous: rank 0 of %d hosts the rendezvous and %w", l.Size, err)
		}
		m.addr = m.srv.Addr()
	}
	if m.conn, err = m.connect(jctx, ctx, roleMember); err != nil {
		m.abandon()
		return nil, err
	}
	if err := m.join(jctx, ctx); err != nil {
		// The others hear why rather than wait for the timeout.
		m.Fail(err)
		m.Close()
		return nil, err
	}
	return m, nil
}

func (l Launch) check() error {
	if l.Size < 1 || l.Size > maxSize {
		return fmt.Errorf("rendezvous: Join: world size %d: give 1 to %d", l.Size, maxSize)
	}
	if l.Rank < 0 || l.Rank >= l.Size {
		return fmt.Errorf("rendezvous: Join: rank %d of %d: the ranks are 0 to %d", l.Rank, l.Size, l.Size-1)
	}
	if l.Hosting < HostedByRankZero || l.Hosting > HostedByTorchAgent {
		return fmt.Errorf("rendezvous: Join: %v: give HostedByRankZero, HostedByLauncher or HostedByTorchAgent", l.Hosting)
	}
	_, port, err := net.SplitHostPort(l.Addr)
	if err != nil {
		return fmt.Errorf("rendezvous: Join: address %q: give host:port: %v", l.Addr, err)
	}
	if port == "0" && (l.Size > 1 || l.Hosting != HostedByRankZero) {
		return fmt.Errorf("rendezvous: Join: address %q: port 0 would let rank 0 pick a port that no other rank knows: give a port", l.Addr)
	}
	return nil
}

func resolveTimeout(d time.Duration) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("rendezvous: Options.Timeout %v: give a positive duration, or 0 for %s", d, config.EnvRendezvousTimeout)
	}
	if d > 0 {
		return d, nil
	}
	v, ok := os.LookupEnv(config.EnvRendezvousTimeout)
	if !ok || strings.TrimSpace(v) == "" {
		return config.DefaultRendezvousTimeout, nil
	}
	t, err := config.ParseRendezvousTimeout(v)
	if err != nil {
		return 0, fmt.Errorf("rendezvous: %w", &config.Error{Var: config.EnvRendezvousTimeout, Value: v, Accepted: config.RendezvousTimeoutForms, Err: err})
	}
	return t, nil
}

// where names the rendezvous in errors.
func (m *Member) where() string {
	return fmt.Sprintf("rendezvous at %s (hosted by %s)", m.addr, m.l.Hosting)
}

func (m *Member) me() string {
	return fmt.Sprintf("rank %d (host %s, pid %d)", m.l.Rank, m.host, m.pid)
}

func (m *Member) key(k string) string { return keyPrefix(m.l.Job) + k }

// Keys, under gocuda/<job>/.
const (
	keyFailed    = "failed"
	keySize      = "size"
	keyJoined    = "joined"
	keyAllJoined = "all-joined"
)

func keyPrefix(job string) string { return "gocuda/" + job + "/" }
func rankKey(r int) string        { return "rank/" + strconv.Itoa(r) }
func leftKey(r int) string        { return "left/" + strconv.Itoa(r) }

// connect dials the rendezvous, retrying until ctx ends (rank 0 may not
// listen yet), and greets it.
func (m *Member) connect(ctx, caller context.Context, role byte) (*client, error) {
	var last error
	backoff := 20 * time.Millisecond
	for {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		var d net.Dialer
		c, err := d.DialContext(dctx, "tcp", m.addr)
		cancel()
		if err == nil {
			cl := newClient(c)
			if err := m.greet(ctx, caller, cl, role); err != nil {
				cl.Close()
				return nil, err
			}
			return cl, nil
		}
		// A dial cut short by the deadline says only "i/o timeout"; keep the
		// last one that finished (e.g. "connection refused"), which says why.
		// Ask the error, not ctx: the dial's context shares ctx's deadline,
		// and its timer may fire before ctx's own does.
		var ne net.Error
		if last == nil || !errors.As(err, &ne) || !ne.Timeout() {
			last = err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			if cerr := callerEnded(caller); cerr != nil {
				return nil, cerr
			}
			return nil, &kindError{ErrTimeout, fmt.Sprintf("%s: could not connect within %v: is %s running, and is %s its address? (the last try: %v)",
				m.where(), m.timeout, m.l.Hosting, m.addr, last)}
		case <-t.C:
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// callerEnded is the caller's own context's end, if it ended.
func callerEnded(caller context.Context) error {
	if caller.Err() != nil {
		return fmt.Errorf("rendezvous: %w", context.Cause(caller))
	}
	return nil
}

func (m *Member) greet(ctx, caller context.Context, cl *client, role byte) error {
	err := cl.validate(ctx)
	refusal := ""
	if err == nil && m.l.Hosting != HostedByTorchAgent {
		// torch's agent knows no HELLO: it would close the connection.
		refusal, err = cl.hello(ctx, m.l.Job, m.l.Rank, m.l.Size, role, m.host, m.pid)
	}
	switch {
	case refusal != "":
		return &refusedError{fmt.Sprintf("%s refused %s: %s", m.where(), m.me(), refusal)}
	case err != nil:
		if cerr := callerEnded(caller); cerr != nil {
			return cerr
		}
		return &kindError{ErrGone, fmt.Sprintf("%s: the handshake failed: %v (is %s a gocuda rendezvous served by %s?)", m.where(), err, m.addr, m.l.Hosting)}
	}
	return nil
}

// refusedError: our server refused this rank's HELLO.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// join registers this rank and waits for the others.
func (m *Member) join(ctx, caller context.Context) error {
	// The watcher first, so that a failure during the join ends it now.
	w, err := m.connect(ctx, caller, roleWatcher)
	if err != nil {
		return err
	}
	m.watcher, m.watchDone = w, make(chan struct{})
	go m.watch()

	octx, done := m.opCtx(ctx)
	defer done()
	fail := func(what string, err error) error { return m.why(octx, caller, what, err, nil) }

	// Every rank must be started with the same world size.
	mine := fmt.Sprintf("%d: %s", m.l.Size, m.me())
	got, err := m.conn.compareSet(octx, m.key(keySize), nil, []byte(mine))
	if err != nil {
		return fail("registering the world size", err)
	}
	if n, who, _ := strings.Cut(string(got), ": "); n != strconv.Itoa(m.l.Size) {
		return fmt.Errorf("%s: this rank (%d) was started with world size %d and %s with %s: every rank must be started with the same world size",
			m.where(), m.l.Rank, m.l.Size, who, n)
	}
	// Two processes with one rank: name both.
	mine = fmt.Sprintf("host %s, pid %d, nonce %016x", m.host, m.pid, rand.Uint64())
	got, err = m.conn.compareSet(octx, m.key(rankKey(m.l.Rank)), nil, []byte(mine))
	if err != nil {
		return fail("registering this rank", err)
	}
	if string(got) != mine {
		other, _, _ := strings.Cut(string(got), ", nonce")
		return fmt.Errorf("%s: rank %d is taken: %s joined as rank %d already; this process is host %s, pid %d: two processes were started as rank %d",
			m.where(), m.l.Rank, other, m.l.Rank, m.host, m.pid, m.l.Rank)
	}
	n, err := m.conn.add(octx, m.key(keyJoined), 1)
	if err != nil {
		return fail("counting the ranks", err)
	}
	if n == int64(m.l.Size) {
		if err := m.conn.set(octx, m.key(keyAllJoined), []byte("1")); err != nil {
			return fail("saying every rank arrived", err)
		}
	}
	if err := m.conn.wait(octx, []string{m.key(keyAllJoined)}); err != nil {
		return m.why(octx, caller, "waiting for the other ranks", err, func() string {
			return m.missing(rankKey, "did not arrive within "+m.timeout.String())
		})
	}
	return nil
}

// opCtx is ctx cut short when the member's calls must end (Fail, Close,
// a failure heard).
func (m *Member) opCtx(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(m.ops, func() { cancel(context.Cause(m.ops)) })
	return c, func() { stop(); cancel(nil) }
}

// why explains a call that failed: a failure heard or this member's own
// end, the caller's context, the timeout (timedOut names what is
// missing), or the connection.
func (m *Member) why(octx, caller context.Context, what string, err error, timedOut func() string) error {
	if m.ops.Err() != nil {
		return context.Cause(m.ops)
	}
	if cerr := callerEnded(caller); cerr != nil {
		return cerr
	}
	if isTimeout(err) || errors.Is(context.Cause(octx), errOurTimeout) {
		msg := fmt.Sprintf("%s: %s: no answer within %v", m.where(), what, m.timeout)
		if timedOut != nil {
			msg = fmt.Sprintf("%s: %s", m.where(), timedOut())
		}
		return &kindError{ErrTimeout, msg}
	}
	return &kindError{ErrGone, fmt.Sprintf("%s: %s: %v: %s exited or was killed, or the network to it failed", m.where(), what, err, m.l.Hosting)}
}

// missing names the ranks whose key (rankKey(r) or a barrier's) is not
// there: "ranks 1 and 3 of 4 " + what.
func (m *Member) missing(key func(int) string, what string) string {
	ctx, cancel := context.WithTimeout(context.Background(), nameTimeout)
	defer cancel()
	var gone []int
	for r := range m.l.Size {
		ok, err := m.conn.check(ctx, []string{m.key(key(r))})
		if err != nil {
			return "not every rank of " + strconv.Itoa(m.l.Size) + " " + what
		}
		if !ok {
			gone = append(gone, r)
		}
	}
	if len(gone) == 0 {
		// They arrived just after the deadline.
		return "every rank arrived, but only after the timeout (" + m.timeout.String() + ")"
	}
	return ranksText(gone, m.l.Size) + " " + what
}

// ranksText is "rank 2 of 3", "ranks 1 and 3 of 4", or the first ones
// and a count when there are many.
func ranksText(r []int, size int) string {
	const show = 16
	s := make([]string, 0, min(len(r), show)+1)
	for i, x := range r {
		if i == show {
			s = append(s, fmt.Sprintf("%d more", len(r)-show))
			break
		}
		s = append(s, strconv.Itoa(x))
	}
	word := "ranks "
	if len(r) == 1 {
		word = "rank "
	}
	return word + joinAnd(s) + " of " + strconv.Itoa(size)
}

// watch waits for the job's "failed" key on a connection of its own;
// when the key comes, or the connection drops, the member hears it.
func (m *Member) watch() {
	defer close(m.watchDone)
	err := m.watcher.wait(context.Background(), []string{m.key(keyFailed)})
	if m.closing.Load() {
		return
	}
	if err != nil {
		m.heard(&kindError{ErrGone, fmt.Sprintf("%s is gone (%v): %s exited or was killed, or the network to it failed", m.where(), err, m.l.Hosting)})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), failTimeout)
	v, err := m.watcher.get(ctx, m.key(keyFailed))
	cancel()
	if m.closing.Load() {
		return
	}
	if err != nil {
		m.heard(&kindError{ErrFailed, fmt.Sprintf("%s: a rank failed, and reading which one failed: %v", m.where(), err)})
		return
	}
	m.heard(&kindError{ErrFailed, string(v)})
}

// heard records the first failure and ends the calls in flight.
func (m *Member) heard(err error) {
	m.heardOnce.Do(func() {
		m.errMu.Lock()
		m.err = err
		m.errMu.Unlock()
		m.stopOps(err)
		close(m.failed)
	})
}

// lock takes the member's connection for one call.
func (m *Member) lock(ctx context.Context) error {
	select {
	case m.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Member) unlock() { <-m.sem }

// Rank is this process's rank.
func (m *Member) Rank() int { return m.l.Rank }

// Size is the number of ranks.
func (m *Member) Size() int { return m.l.Size }

// Launch is what Join was given.
func (m *Member) Launch() Launch { return m.l }

// call runs f on the member's connection under the timeout, ctx and the
// member's life; timedOut says what is missing on a timeout.
func (m *Member) call(ctx context.Context, what string, f func(octx context.Context) error, timedOut func() string) error {
	tctx, cancel := context.WithTimeoutCause(ctx, m.timeout, errOurTimeout)
	defer cancel()
	octx, done := m.opCtx(tctx)
	defer done()
	if err := m.lock(octx); err != nil {
		return m.why(octx, ctx, what, err, nil)
	}
	defer m.unlock()
	if m.closed {
		return ErrClosed
	}
	if err := f(octx); err != nil {
		var ke *kindError
		if errors.As(err, &ke) || errors.Is(err, errShared) {
			return err
		}
		return m.why(octx, ctx, what, err, timedOut)
	}
	return nil
}

var errShared = errors.New("shared already")

// Share gives every rank the value rank 0 makes: rank 0 calls make, the
// others wait for its value (at most the timeout). Each key is shared
// once; values are at most 1 MiB - 1. An error of make on rank 0 is
// returned to every rank.
func (m *Member) Share(ctx context.Context, key string, make func() ([]byte, error)) ([]byte, error) {
	k := m.key("share/" + key)
	var out []byte
	if m.ops.Err() != nil {
		// Closed or failed: make must not run for nothing.
		return nil, context.Cause(m.ops)
	}
	if m.l.Rank == 0 {
		if make == nil {
			return nil, fmt.Errorf("rendezvous: Share %q: rank 0 needs a function that makes the value, not nil", key)
		}
		v, merr := make()
		payload := append([]byte{'v'}, v...)
		if merr != nil {
			payload = append([]byte{'e'}, merr.Error()...)
		} else if len(payload) > maxValue {
			merr = fmt.Errorf("the value is %d bytes; at most %d can be shared", len(v), maxValue-1)
			payload = append([]byte{'e'}, merr.Error()...)
		}
		err := m.call(ctx, fmt.Sprintf("sharing %q", key), func(octx context.Context) error {
			got, err := m.conn.compareSet(octx, k, nil, payload)
			if err != nil {
				return err
			}
			if string(got) != string(payload) {
				return fmt.Errorf("%s: Share %q: a value was shared under this key already: give each Share its own key: %w", m.where(), key, errShared)
			}
			return nil
		}, nil)
		if merr != nil {
			return nil, errors.Join(fmt.Errorf("rendezvous: Share %q: %w", key, merr), err)
		}
		return v, err
	}
	err := m.call(ctx, fmt.Sprintf("getting %q from rank 0", key), func(octx context.Context) error {
		if err := m.conn.wait(octx, []string{k}); err != nil {
			return err
		}
		v, err := m.conn.get(octx, k)
		out = v
		return err
	}, func() string {
		return fmt.Sprintf("Share %q: rank 0 did not share it within %v", key, m.timeout)
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 || (out[0] != 'v' && out[0] != 'e') {
		return nil, fmt.Errorf("%s: Share %q: the value rank 0 shared is not one Share writes (%q)", m.where(), key, truncate(out))
	}
	if out[0] == 'e' {
		return nil, fmt.Errorf("%s: Share %q: rank 0 could not make the value: %s", m.where(), key, out[1:])
	}
	return out[1:], nil
}

// Barrier returns once every rank has called Barrier with this name as
// many times as this one has (at most the timeout; the error names the
// ranks that did not come).
func (m *Member) Barrier(ctx context.Context, name string) error {
	var base string
	return m.call(ctx, fmt.Sprintf("barrier %q", name), func(octx context.Context) error {
		k := m.barriers[name]
		m.barriers[name] = k + 1
		base = fmt.Sprintf("barrier/%s/%d/", name, k)
		if err := m.conn.set(octx, m.key(base+strconv.Itoa(m.l.Rank)), []byte("1")); err != nil {
			return err
		}
		n, err := m.conn.add(octx, m.key(base+"count"), 1)
		if err != nil {
			return err
		}
		if n == int64(m.l.Size) {
			if err := m.conn.set(octx, m.key(base+"done"), []byte("1")); err != nil {
				return err
			}
		}
		return m.conn.wait(octx, []string{m.key(base + "done")})
	}, func() string {
		return fmt.Sprintf("barrier %q: %s", name, m.missing(func(r int) string { return base + strconv.Itoa(r) }, "did not arrive within "+m.timeout.String()))
	})
}

// Fail tells every rank that this one failed, and why: their Failed
// closes, and their Err names this rank and cause. The first failure of
// the job wins. Calls in flight on this member end. It waits at most 10
// s (or the timeout, if shorter), plus up to 5 s for a call in flight to
// end.
func (m *Member) Fail(cause error) {
	if cause == nil {
		cause = errors.New("failed (no cause given)")
	}
	m.stopOps(fmt.Errorf("rendezvous: this rank failed: %w", cause))
	if m.Err() != nil {
		// The job failed already (the first failure wins), or the
		// rendezvous is gone: nothing to tell.
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(failTimeout, m.timeout))
	defer cancel()
	if m.lock(ctx) != nil {
		return
	}
	defer m.unlock()
	if m.closed || m.conn == nil {
		return
	}
	text := []byte(fmt.Sprintf("%s: %v", m.me(), cause))
	if _, err := m.conn.compareSet(ctx, m.key(keyFailed), nil, text); err == nil {
		return
	}
	// The member's connection is out of step: say it on a new one.
	if c, err := m.connect(ctx, ctx, roleWatcher); err == nil {
		c.compareSet(ctx, m.key(keyFailed), nil, text)
		c.Close()
	}
}

// Failed is closed when a rank of the job failed (this one included,
// after Fail) or the rendezvous went away; Err says which. It never
// closes after a clean Close.
func (m *Member) Failed() <-chan struct{} { return m.failed }

// Err is why Failed closed: an error naming the rank and what happened
// (errors.Is ErrFailed), or the rendezvous that went away (ErrGone); nil
// before.
func (m *Member) Err() error {
	m.errMu.Lock()
	defer m.errMu.Unlock()
	return m.err
}

// Close leaves the rendezvous cleanly: the others are not told this
// rank failed. The rank hosting the rendezvous waits until every other
// rank has left or gone (at most 30 s, or the timeout if shorter) before
// it stops serving, so that ranks still finishing are not told it
// vanished. Close returns once the member's goroutine and connections
// have ended.
func (m *Member) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Member) close() error {
	m.closing.Store(true)
	m.stopOps(ErrClosed)
	ctx, cancel := context.WithTimeout(context.Background(), min(failTimeout, m.timeout))
	defer cancel()
	var err error
	if m.lock(ctx) == nil {
		if m.conn != nil && !m.closed {
			err = m.conn.set(ctx, m.key(leftKey(m.l.Rank)), []byte("1"))
		}
		m.closed = true
		m.unlock()
	}
	if m.srv != nil {
		m.srv.waitLeft(m.l.Rank, time.Now().Add(min(drainTimeout, m.timeout)))
	}
	m.abandon()
	if err != nil && m.Err() == nil {
		return fmt.Errorf("%s: leaving: %w", m.where(), err)
	}
	return nil
}

// abandon closes the connections and the server, and waits for the
// watcher to end.
func (m *Member) abandon() {
	m.closing.Store(true)
	if m.watcher != nil {
		m.watcher.Close()
		<-m.watchDone
	}
	if m.conn != nil {
		m.conn.Close()
	}
	if m.srv != nil {
		m.srv.Close()
	}
}
