package rendezvous

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testServer serves job's size ranks on a loopback port; tweak changes
// the server before it accepts (a short handshake, no HELLO as torch's
// agent).
func testServer(t *testing.T, job string, size int, tweak func(*Server)) *Server {
	t.Helper()
	s := newServer(job, size)
	if tweak != nil {
		tweak(s)
	}
	require.NoError(t, s.start("127.0.0.1:0"))
	t.Cleanup(func() { s.Close() })
	return s
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func testClient(t *testing.T, s *Server, job string, rank, size int, role byte) *client {
	t.Helper()
	cl := newClient(dialRaw(t, s.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, cl.validate(ctx))
	if s.requireHello {
		refusal, err := cl.hello(ctx, job, rank, size, role, "testhost", 1234)
		require.NoError(t, err)
		require.Empty(t, refusal)
	}
	return cl
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The TCPStore commands behave as torch 2.11's server was seen to.
func TestClientAndServerSpeakTCPStore(t *testing.T) {
	for _, hello := range []bool{true, false} {
		t.Run(map[bool]string{true: "ours", false: "as torch's agent"}[hello], func(t *testing.T) {
			s := testServer(t, "j", 2, func(s *Server) { s.requireHello = hello })
			c := testClient(t, s, "j", 0, 2, roleMember)
			ctx := bounded(t)

			got, err := c.compareSet(ctx, "k", nil, []byte("first"))
			require.NoError(t, err)
			assert.Equal(t, "first", string(got))
			got, err = c.compareSet(ctx, "k", nil, []byte("second"))
			require.NoError(t, err)
			assert.Equal(t, "first", string(got), "only if absent: the value stays")
			got, err = c.compareSet(ctx, "k", []byte("first"), []byte("third"))
			require.NoError(t, err)
			assert.Equal(t, "third", string(got))
			got, err = c.compareSet(ctx, "absent", []byte("x"), []byte("y"))
			require.NoError(t, err)
			assert.Equal(t, "x", string(got), "torch answers the expected value for a missing key")

			for _, want := range []int64{3, 5, -1} {
				n, err := c.add(ctx, "n", map[int64]int64{3: 3, 5: 2, -1: -6}[want])
				require.NoError(t, err)
				assert.Equal(t, want, n)
			}
			v, err := c.get(ctx, "n")
			require.NoError(t, err)
			assert.Equal(t, "-1", string(v), "ADD stores decimal text")

			ready, err := c.check(ctx, []string{"k", "n"})
			require.NoError(t, err)
			assert.True(t, ready)
			ready, err = c.check(ctx, []string{"k", "later"})
			require.NoError(t, err)
			assert.False(t, ready)

			// A WAIT is answered when another connection sets the key.
			other := testClient(t, s, "j", 1, 2, roleMember)
			go func() {
				time.Sleep(50 * time.Millisecond)
				other.set(context.Background(), "later", []byte("v"))
			}()
			require.NoError(t, c.wait(ctx, []string{"k", "later"}))

			// A WAIT that times out is cancelled, and the connection stays
			// in step.
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			err = c.wait(short, []string{"never"})
			require.Error(t, err)
			assert.True(t, isTimeout(err), "%v", err)
			require.NoError(t, c.broken)
			v, err = c.get(ctx, "later")
			require.NoError(t, err)
			assert.Equal(t, "v", string(v))
		})
	}
}

// A CANCEL_WAIT that crosses the WAIT's answer reads both: stop-waiting,
// then wait-canceled.
func TestCancelWaitAfterTheWaitWasMet(t *testing.T) {
	s := testServer(t, "j", 1, nil)
	c := testClient(t, s, "j", 0, 1, roleMember)
	raw, r := c.conn, c.r
	var e enc
	e.u8(cmdWait)
	e.keys([]string{"k"})
	_, err := raw.Write(e.b)
	require.NoError(t, err)
	require.NoError(t, c.set(bounded(t), "k", nil))
	_, err = raw.Write([]byte{cmdCancelWait})
	require.NoError(t, err)
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	b1, err := r.ReadByte()
	require.NoError(t, err)
	b2, err := r.ReadByte()
	require.NoError(t, err)
	assert.Equal(t, []byte{waitStop, waitCanceled}, []byte{b1, b2})
}

// frame reads what the server writes until it closes the connection, within
// a bound.
func readToClose(t *testing.T, c net.Conn, bound time.Duration) ([]byte, time.Duration) {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(bound))
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		require.NoError(t, err, "the server must close the connection within %v", bound)
	}
	return b, time.Since(start)
}

func helloMsg(job string, rank, size int64, role byte) []byte {
	var e enc
	e.u8(cmdValidate)
	e.u32(validateMagic)
	e.u8(cmdHello)
	e.str(job)
	e.i64(rank)
	e.i64(size)
	e.u8(role)
	e.str("h")
	e.i64(7)
	return e.b
}

// afterHello is a valid VALIDATE and HELLO of rank 0 of job "j" (2
// ranks), then more.
func afterHello(more ...byte) []byte {
	return append(helloMsg("j", 0, 2, roleMember), more...)
}

func msg(f func(e *enc)) []byte {
	var e enc
	f(&e)
	return e.b
}

// Streams that break the protocol get an error frame (0xFF and a reason)
// or a refusal, and the connection is closed, within bounds; nothing
// panics.
func TestServerAnswersBadStreamsAndCloses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		send  []byte
		reply byte // errFrame, or the HELLO status byte
		want  string
	}{
		{"not VALIDATE first", msg(func(e *enc) { e.u8(cmdSet); e.str("k"); e.str("v") }), errFrame, "the first message must be VALIDATE (0) with the magic 0x3C85F7CE; this one began with SET"},
		{"HTTP", []byte("GET / HTTP/1.1\r\n\r\n"), errFrame, "the first message must be VALIDATE"},
		{"bad magic", msg(func(e *enc) { e.u8(cmdValidate); e.u32(0xdeadbeef) }), errFrame, "VALIDATE's magic is 0xDEADBEEF, not 0x3C85F7CE"},
		{"no HELLO", msg(func(e *enc) { e.u8(cmdValidate); e.u32(validateMagic); e.u8(cmdGet); e.str("k") }), errFrame, "this rendezvous needs HELLO (0x80) after VALIDATE, not GET"},
		{"foreign job", helloMsg("old-job", 1, 2, roleMember), helloRefused, `this rendezvous serves job "j"; this rank came with job "old-job": is it a leftover of an earlier run?`},
		{"other world size", helloMsg("j", 1, 4, roleMember), helloRefused, "this rank was started with world size 4 and the rendezvous with 2"},
		{"rank out of range", helloMsg("j", 5, 2, roleMember), helloRefused, "rank 5 is out of range: the ranks are 0 to 1"},
		{"huge rank", helloMsg("j", -1, 2, roleMember), helloRefused, "is out of range"},
		{"bad role", helloMsg("j", 0, 2, 9), helloRefused, "role 9 is neither member"},
		{"huge job string", msg(func(e *enc) { e.u8(cmdValidate); e.u32(validateMagic); e.u8(cmdHello); e.u64(1 << 40) }), errFrame, "too long"},
		{"unknown command", afterHello(42), errFrame, "command 0x2a is not one this server knows"},
		{"torch's PING", afterHello(13), errFrame, "not one this server knows"},
		{"VALIDATE again", afterHello(msg(func(e *enc) { e.u8(cmdValidate); e.u32(validateMagic) })...), errFrame, "VALIDATE may come only first, once"},
		{"oversized key", afterHello(msg(func(e *enc) { e.u8(cmdSet); e.u64(maxValue + 1) })...), errFrame, "SET: too long: 1048577 bytes, at most 1048576"},
		{"oversized value", afterHello(msg(func(e *enc) { e.u8(cmdSet); e.str("k"); e.u64(1 << 62) })...), errFrame, "SET: too long"},
		{"too many keys", afterHello(msg(func(e *enc) { e.u8(cmdWait); e.u64(maxKeys + 1) })...), errFrame, "WAIT: too long: 4097 keys, at most 4096"},
		{"GET of a missing key", afterHello(msg(func(e *enc) { e.u8(cmdGet); e.str("nope") })...), errFrame, `GET "nope": no such key`},
		{"ADD to text", afterHello(msg(func(e *enc) {
			e.u8(cmdSet)
			e.str("k")
			e.str("abc")
			e.u8(cmdAdd)
			e.str("k")
			e.i64(1)
		})...), errFrame, `ADD "k": the key holds "abc", not a number`},
		{"too many waits", afterHello(bytes.Repeat(msg(func(e *enc) { e.u8(cmdWait); e.keys([]string{"never"}) }), maxWaits+1)...), errFrame, "64 waits pending on this connection already, at most 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t, "j", 2, nil)
			c := dialRaw(t, s.Addr())
			_, err := c.Write(tc.send)
			require.NoError(t, err)
			out, took := readToClose(t, c, 5*time.Second)
			assert.Less(t, took, 5*time.Second)
			require.NotEmpty(t, out, "a reason before the close")
			if tc.reply != errFrame {
				require.Equal(t, tc.reply, out[0], "%q", out)
				out = out[1:]
			} else {
				// After a HELLO its ok byte comes first.
				if out[0] == helloOK {
					out = out[1:]
				}
				require.Equal(t, byte(errFrame), out[0], "%q", out)
				out = out[1:]
			}
			reason, err := readStr(bufio.NewReader(bytes.NewReader(out)), maxValue)
			require.NoError(t, err)
			assert.Contains(t, reason, tc.want)
		})
	}
}

// A connection that says nothing, or stops in the middle of the
// handshake, is closed after the handshake's bound.
func TestServerClosesSilentConnections(t *testing.T) {
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"nothing", nil},
		{"half a VALIDATE", []byte{cmdValidate, 0xCE}},
		{"VALIDATE and no HELLO", msg(func(e *enc) { e.u8(cmdValidate); e.u32(validateMagic) })},
		{"half a HELLO", helloMsg("j", 0, 2, roleMember)[:12]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t, "j", 2, func(s *Server) { s.handshake = 200 * time.Millisecond })
			c := dialRaw(t, s.Addr())
			if tc.send != nil {
				_, err := c.Write(tc.send)
				require.NoError(t, err)
			}
			out, took := readToClose(t, c, 5*time.Second)
			assert.Less(t, took, 3*time.Second)
			if len(out) > 0 {
				assert.Equal(t, byte(errFrame), out[0])
				assert.Contains(t, string(out), "within 200ms")
			}
		})
	}
}

// A member's connection that closes before it left fails the job; a
// watcher's does not, nor a member's that left.
func TestServerFailsTheJobWhenAMemberVanishes(t *testing.T) {
	s := testServer(t, "j", 3, nil)
	watcher := testClient(t, s, "j", 0, 3, roleWatcher)
	leaver := testClient(t, s, "j", 1, 3, roleMember)
	require.NoError(t, leaver.set(bounded(t), keyPrefix("j")+leftKey(1), []byte("1")))
	leaver.Close()
	testClient(t, s, "j", 0, 3, roleWatcher).Close()
	ready, err := watcher.check(bounded(t), []string{keyPrefix("j") + keyFailed})
	require.NoError(t, err)
	assert.False(t, ready, "a clean leave and a watcher's close fail nothing")

	dying := testClient(t, s, "j", 2, 3, roleMember)
	dying.Close()
	require.NoError(t, watcher.wait(bounded(t), []string{keyPrefix("j") + keyFailed}))
	v, err := watcher.get(bounded(t), keyPrefix("j")+keyFailed)
	require.NoError(t, err)
	assert.Equal(t, "rank 2 (host testhost, pid 1234): its connection closed before it left: the process exited or was killed", string(v))
}

func TestServerRefusesARankConnectedTwice(t *testing.T) {
	s := testServer(t, "j", 2, nil)
	testClient(t, s, "j", 1, 2, roleMember)
	cl := newClient(dialRaw(t, s.Addr()))
	require.NoError(t, cl.validate(bounded(t)))
	refusal, err := cl.hello(bounded(t), "j", 1, 2, roleMember, "otherhost", 99)
	require.NoError(t, err)
	assert.Equal(t, "rank 1 is already connected from host testhost, pid 1234; this process is host otherhost, pid 99: two processes were started as rank 1", refusal)
	// A rank of this job that cannot take part fails the job.
	w := testClient(t, s, "j", 0, 2, roleWatcher)
	require.NoError(t, w.wait(bounded(t), []string{keyPrefix("j") + keyFailed}))
}

func TestListenOnAPortInUseNamesTheAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, err = Listen(ln.Addr().String(), "j", 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rendezvous: cannot listen on "+ln.Addr().String())
	assert.Contains(t, err.Error(), "address already in use")

	_, err = Listen("127.0.0.1:0", "j", 0)
	assert.ErrorContains(t, err, "world size 0: give 1 to 1048576")
}

func TestServerListensOnlyWhereItIsTold(t *testing.T) {
	s, err := Listen("127.0.0.1:0", "j", 1)
	require.NoError(t, err)
	defer s.Close()
	host, _, err := net.SplitHostPort(s.Addr())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
}
