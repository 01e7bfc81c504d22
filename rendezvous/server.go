package rendezvous

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Server is a rendezvous served by this process: rank 0's (Join starts
// it for HostedByRankZero) or gocuda launch's. It speaks the TCPStore
// subset the client uses, requires every connection to say which job,
// rank and world size it comes with, and refuses those of another job.
// When a rank's member connection closes before the rank left, it
// records that rank as failed, which every other rank's watcher hears.
type Server struct {
	ln   net.Listener
	job  string
	size int
	// who serves it, as a refusal says it: "rank 0", or "the rendezvous"
	// for Listen's callers (gocuda launch).
	who string

	// requireHello is false only in tests, where the server stands in
	// for torchrun's agent store (which knows no HELLO).
	requireHello bool
	// handshake bounds how long a new connection may take to say
	// VALIDATE and HELLO: one that says nothing must not hold a goroutine.
	handshake time.Duration

	mu      sync.Mutex
	kv      map[string][]byte
	waiters map[*waiter]struct{}
	members map[int]*peer // open member connections by rank
	conns   map[*sconn]struct{}
	changed chan struct{} // closed and replaced when a key or a member changes
	closed  bool

	wg        sync.WaitGroup
	closeOnce sync.Once
}

// peer is what a connection said in its HELLO.
type peer struct {
	job        string
	rank, size int
	role       byte
	host       string
	pid        int64
}

func (p *peer) String() string {
	return fmt.Sprintf("rank %d (host %s, pid %d)", p.rank, p.host, p.pid)
}

// waiter is a pending WAIT.
type waiter struct {
	keys []string
	sc   *sconn
}

// sconn is one connection to the server. Replies are queued under the
// server's lock where their order matters (a WAIT's reply before the
// CANCEL_WAIT's) and written by whoever queued them, in queue order.
type sconn struct {
	c    net.Conn
	r    *bufio.Reader
	qmu  sync.Mutex
	q    [][]byte
	wmu  sync.Mutex
	dead bool // under wmu: a write failed, the rest are dropped
	peer *peer
}

// Bounds of the server's waits.
const (
	handshakeTimeout = 10 * time.Second
	writeTimeout     = 10 * time.Second
)

// Listen serves a rendezvous for job's size ranks on addr (host:port;
// port 0 picks a free one, which Addr tells). It listens on that address
// only: "127.0.0.1:29500" is not widened to every interface.
func Listen(addr, job string, size int) (*Server, error) {
	s, err := listen(addr, job, size, "the rendezvous")
	if err != nil {
		return nil, fmt.Errorf("rendezvous: %w", err)
	}
	return s, nil
}

func listen(addr, job string, size int, who string) (*Server, error) {
	if size < 1 || size > maxSize {
		return nil, fmt.Errorf("Listen: world size %d: give 1 to %d", size, maxSize)
	}
	s := newServer(job, size)
	s.who = who
	if err := s.start(addr); err != nil {
		return nil, err
	}
	return s, nil
}

// start listens on addr and accepts connections.
func (s *Server) start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (is another job, or an earlier run of this one, using the port? does the host name this machine?): %w", addr, err)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.accept()
	return nil
}

func newServer(job string, size int) *Server {
	return &Server{job: job, size: size, who: "the rendezvous", requireHello: true, handshake: handshakeTimeout,
		kv: map[string][]byte{}, waiters: map[*waiter]struct{}{}, members: map[int]*peer{},
		conns: map[*sconn]struct{}{}, changed: make(chan struct{})}
}

// Addr is the address the server listens on, with the port it got.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server: it stops listening, closes every connection
// (their ranks' watchers report the rendezvous gone) and returns once
// every goroutine of the server has ended.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := make([]*sconn, 0, len(s.conns))
		for sc := range s.conns {
			conns = append(conns, sc)
		}
		s.mu.Unlock()
		if s.ln != nil {
			err = s.ln.Close()
		}
		for _, sc := range conns {
			sc.c.Close()
		}
		s.wg.Wait()
	})
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, or the like: the ranks retry.
			time.Sleep(20 * time.Millisecond)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
		}()
	}
}

// serveConn serves one connection until it closes or breaks the
// protocol, or the server closes.
func (s *Server) serveConn(c net.Conn) {
	sc := &sconn{c: c, r: bufio.NewReader(c)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	defer s.drop(sc)

	c.SetReadDeadline(time.Now().Add(s.handshake))
	if err := s.handshakeWith(sc); err != nil {
		if err != errRefused {
			sc.fail(err)
		}
		return
	}
	// After HELLO a member may sit idle as long as its job runs, and a
	// watcher waits for a failure that may never come.
	c.SetReadDeadline(time.Time{})
	for {
		cmd, err := readU8(sc.r)
		if err != nil {
			return // closed by the peer or by Close
		}
		if err := s.command(sc, cmd); err != nil {
			sc.fail(err)
			return
		}
	}
}

// errRefused: a HELLO was answered with a refusal, already written.
var errRefused = errors.New("refused")

func (s *Server) handshakeWith(sc *sconn) error {
	cmd, err := readU8(sc.r)
	if err != nil {
		return s.quiet(err, "before VALIDATE")
	}
	if cmd != cmdValidate {
		return fmt.Errorf("the first message must be VALIDATE (0) with the magic 0x%08X; this one began with %s: is this a TCPStore client of the right protocol?", validateMagic, cmdName(cmd))
	}
	magic, err := readU32(sc.r)
	if err != nil {
		return s.quiet(err, "in VALIDATE")
	}
	if magic != validateMagic {
		return fmt.Errorf("VALIDATE's magic is 0x%08X, not 0x%08X: the client speaks another protocol", magic, validateMagic)
	}
	if !s.requireHello {
		return nil
	}
	cmd, err = readU8(sc.r)
	if err != nil {
		return s.quiet(err, "before HELLO")
	}
	if cmd != cmdHello {
		return fmt.Errorf("this rendezvous needs HELLO (0x%02X) after VALIDATE, not %s: it serves gocuda's ranks only", cmdHello, cmdName(cmd))
	}
	p, err := readHello(sc.r)
	if err != nil {
		return s.quiet(err, "in HELLO")
	}
	reason, failJob := s.admit(sc, p)
	if reason == "" {
		sc.send([]byte{helloOK})
		return nil
	}
	var e enc
	e.u8(helloRefused)
	e.str(reason)
	sc.send(e.b)
	if failJob {
		// A rank of this job that cannot take part (a wrong size, a
		// rank out of range or twice): the job cannot run, so every
		// rank hears it now rather than at the timeout.
		s.setFailed(fmt.Sprintf("%s was refused by the rendezvous: %s", p, reason))
	}
	return errRefused
}

func readHello(r *bufio.Reader) (*peer, error) {
	p := &peer{}
	var err error
	if p.job, err = readStr(r, maxHelloStr); err != nil {
		return nil, err
	}
	rank, err := readU64(r)
	if err != nil {
		return nil, err
	}
	size, err := readU64(r)
	if err != nil {
		return nil, err
	}
	if p.role, err = readU8(r); err != nil {
		return nil, err
	}
	if p.host, err = readStr(r, maxHelloStr); err != nil {
		return nil, err
	}
	pid, err := readU64(r)
	if err != nil {
		return nil, err
	}
	p.pid = int64(pid)
	// Clamp so that a huge value reads as out of range, not as a
	// negative int.
	p.rank, p.size = clampInt(rank), clampInt(size)
	return p, nil
}

func clampInt(v uint64) int {
	if v > maxSize+1 {
		return maxSize + 1
	}
	return int(v)
}

// admit checks a HELLO: "" accepts it; else the reason, and whether the
// job must fail (a rank of this job that cannot take part).
func (s *Server) admit(sc *sconn, p *peer) (reason string, failJob bool) {
	if p.job != s.job {
		return fmt.Sprintf("this rendezvous serves job %q; this rank came with job %q: is it a leftover of an earlier run?", s.job, p.job), false
	}
	if p.role != roleMember && p.role != roleWatcher {
		return fmt.Sprintf("role %d is neither member (%d) nor watcher (%d)", p.role, roleMember, roleWatcher), false
	}
	if p.size != s.size {
		return fmt.Sprintf("this rank was started with world size %s and %s with %d: every rank must be started with the same world size", sizeText(p.size), s.who, s.size), true
	}
	if p.rank >= s.size {
		return fmt.Sprintf("rank %s is out of range: the ranks are 0 to %d", sizeText(p.rank), s.size-1), true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.role == roleMember {
		if old := s.members[p.rank]; old != nil {
			return fmt.Sprintf("rank %d is already connected from host %s, pid %d; this process is host %s, pid %d: two processes were started as rank %d",
				p.rank, old.host, old.pid, p.host, p.pid, p.rank), true
		}
		s.members[p.rank] = p
		s.changedLocked()
	}
	sc.peer = p
	return "", false
}

func sizeText(n int) string {
	if n > maxSize {
		return "(over " + strconv.Itoa(maxSize) + ")"
	}
	return strconv.Itoa(n)
}

// quiet turns a connection that ended before a message into a quiet
// close (nothing to say to a peer that left) and a short read into an
// error.
func (s *Server) quiet(err error, where string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return errRefused
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("nothing came %s within %v: closing", where, s.handshake)
	}
	return fmt.Errorf("the stream ended %s: %v", where, err)
}

// command serves one command; an error closes the connection with an
// error frame.
func (s *Server) command(sc *sconn, cmd byte) error {
	bad := func(err error) error {
		if errors.Is(err, errTooLong) {
			return fmt.Errorf("%s: %v", cmdName(cmd), err)
		}
		return fmt.Errorf("%s: the stream ended in the middle: %v", cmdName(cmd), err)
	}
	switch cmd {
	case cmdSet:
		k, err := readStr(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		v, err := readVec(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		s.set(k, v)
	case cmdCompareSet:
		k, err := readStr(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		exp, err := readVec(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		des, err := readVec(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		var e enc
		e.vec(s.compareSet(k, exp, des))
		sc.send(e.b)
	case cmdGet:
		k, err := readStr(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		s.mu.Lock()
		v, ok := s.kv[k]
		s.mu.Unlock()
		if !ok {
			// torch's server fails the same way: clients WAIT first.
			return fmt.Errorf("GET %q: no such key: WAIT for a key before getting it", k)
		}
		var e enc
		e.vec(v)
		sc.send(e.b)
	case cmdAdd:
		k, err := readStr(sc.r, maxValue)
		if err != nil {
			return bad(err)
		}
		d, err := readU64(sc.r)
		if err != nil {
			return bad(err)
		}
		n, err := s.add(k, int64(d))
		if err != nil {
			return err
		}
		var e enc
		e.i64(n)
		sc.send(e.b)
	case cmdCheck:
		keys, err := readKeys(sc.r)
		if err != nil {
			return bad(err)
		}
		s.mu.Lock()
		ready := s.hasAll(keys)
		s.mu.Unlock()
		if ready {
			sc.send([]byte{checkReady})
		} else {
			sc.send([]byte{checkNotReady})
		}
	case cmdWait:
		keys, err := readKeys(sc.r)
		if err != nil {
			return bad(err)
		}
		return s.wait(sc, keys)
	case cmdCancelWait:
		s.mu.Lock()
		for w := range s.waiters {
			if w.sc == sc {
				delete(s.waiters, w)
			}
		}
		// Queued under the lock: after any WAIT reply already fired.
		sc.enqueue([]byte{waitCanceled})
		s.mu.Unlock()
		sc.flush()
	case cmdValidate, cmdHello:
		return fmt.Errorf("%s may come only first, once", cmdName(cmd))
	default:
		return fmt.Errorf("command %s is not one this server knows: it speaks VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT, CANCEL_WAIT and HELLO", cmdName(cmd))
	}
	return nil
}

func (s *Server) hasAll(keys []string) bool {
	for _, k := range keys {
		if _, ok := s.kv[k]; !ok {
			return false
		}
	}
	return true
}

func (s *Server) wait(sc *sconn, keys []string) error {
	s.mu.Lock()
	if s.hasAll(keys) {
		sc.enqueue([]byte{waitStop})
		s.mu.Unlock()
		sc.flush()
		return nil
	}
	n := 0
	for w := range s.waiters {
		if w.sc == sc {
			n++
		}
	}
	if n >= maxWaits {
		s.mu.Unlock()
		return fmt.Errorf("WAIT: %d waits pending on this connection already, at most %d", n, maxWaits)
	}
	s.waiters[&waiter{keys: keys, sc: sc}] = struct{}{}
	s.mu.Unlock()
	return nil
}

// set stores v at k and answers the waits it completes.
func (s *Server) set(k string, v []byte) {
	s.mu.Lock()
	s.kv[k] = v
	fired := s.fireLocked()
	s.mu.Unlock()
	flushAll(fired)
}

func (s *Server) compareSet(k string, exp, des []byte) []byte {
	s.mu.Lock()
	cur, ok := s.kv[k]
	var fired []*sconn
	switch {
	case !ok && len(exp) == 0:
		s.kv[k] = des
		cur = des
		fired = s.fireLocked()
	case !ok:
		// torch's server answers the expected value for a missing key.
		cur = exp
	case string(cur) == string(exp):
		s.kv[k] = des
		cur = des
		fired = s.fireLocked()
	}
	s.mu.Unlock()
	flushAll(fired)
	return cur
}

func (s *Server) add(k string, d int64) (int64, error) {
	s.mu.Lock()
	var n int64
	if cur, ok := s.kv[k]; ok {
		var err error
		if n, err = strconv.ParseInt(string(cur), 10, 64); err != nil {
			s.mu.Unlock()
			return 0, fmt.Errorf("ADD %q: the key holds %q, not a number", k, truncate(cur))
		}
	}
	n += d
	s.kv[k] = []byte(strconv.FormatInt(n, 10))
	fired := s.fireLocked()
	s.mu.Unlock()
	flushAll(fired)
	return n, nil
}

// setFailed records the job's first failure.
func (s *Server) setFailed(text string) {
	s.compareSet(s.key(keyFailed), nil, []byte(text))
}

func (s *Server) key(k string) string { return keyPrefix(s.job) + k }

// fireLocked answers the waits whose keys all exist now; the caller
// flushes the connections it returns once it has unlocked.
func (s *Server) fireLocked() []*sconn {
	var fired []*sconn
	for w := range s.waiters {
		if s.hasAll(w.keys) {
			delete(s.waiters, w)
			w.sc.enqueue([]byte{waitStop})
			fired = append(fired, w.sc)
		}
	}
	s.changedLocked()
	return fired
}

func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func flushAll(conns []*sconn) {
	for _, sc := range conns {
		sc.flush()
	}
}

// drop forgets a connection that ended. A member that had not left
// fails the job: its process exited or was killed.
func (s *Server) drop(sc *sconn) {
	sc.c.Close()
	s.mu.Lock()
	delete(s.conns, sc)
	for w := range s.waiters {
		if w.sc == sc {
			delete(s.waiters, w)
		}
	}
	p := sc.peer
	var failed string
	if p != nil && p.role == roleMember && s.members[p.rank] == p {
		delete(s.members, p.rank)
		s.changedLocked()
		if _, left := s.kv[s.key(leftKey(p.rank))]; !left && !s.closed {
			failed = fmt.Sprintf("%s: its connection closed before it left: the process exited or was killed", p)
		}
	}
	s.mu.Unlock()
	if failed != "" {
		s.setFailed(failed)
	}
}

// waitLeft waits until every rank but self has left or gone (its member
// connection closed), or until the deadline: the hosting rank closes the
// server only then, so that ranks still finishing are not told the
// rendezvous vanished.
func (s *Server) waitLeft(self int, deadline time.Time) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		s.mu.Lock()
		done := true
		for r, p := range s.members {
			if _, left := s.kv[s.key(leftKey(r))]; r != self && p != nil && !left {
				done = false
				break
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		}
	}
}

func (sc *sconn) enqueue(b []byte) {
	sc.qmu.Lock()
	sc.q = append(sc.q, b)
	sc.qmu.Unlock()
}

// flush writes what is queued, in order. A peer that does not read for
// writeTimeout is cut off.
func (sc *sconn) flush() {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	for {
		sc.qmu.Lock()
		q := sc.q
		sc.q = nil
		sc.qmu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, b := range q {
			if sc.dead {
				continue
			}
			sc.c.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := sc.c.Write(b); err != nil {
				sc.dead = true
				sc.c.Close()
			}
		}
	}
}

func (sc *sconn) send(b []byte) {
	sc.enqueue(b)
	sc.flush()
}

// fail writes an error frame, best effort, before the connection closes.
func (sc *sconn) fail(err error) {
	var e enc
	e.u8(errFrame)
	e.str("rendezvous: " + err.Error())
	sc.send(e.b)
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
