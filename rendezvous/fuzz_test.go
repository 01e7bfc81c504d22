package rendezvous

import (
	"io"
	"net"
	"testing"
	"time"
)

// FuzzServer feeds arbitrary bytes to the server as one connection: the
// server answers, refuses or closes, and never panics or hangs (each
// input must be served within 2 s). Seeds are valid exchanges, so that
// the fuzzer starts past the handshake.
func FuzzServer(f *testing.F) {
	hello := helloMsg("fuzz", 1, 4, roleMember)
	then := func(parts ...[]byte) []byte {
		out := append([]byte(nil), hello...)
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	set := msg(func(e *enc) { e.u8(cmdSet); e.str("gocuda/fuzz/k"); e.str("v") })
	get := msg(func(e *enc) { e.u8(cmdGet); e.str("gocuda/fuzz/k") })
	cas := msg(func(e *enc) { e.u8(cmdCompareSet); e.str("gocuda/fuzz/c"); e.str(""); e.str("first") })
	add := msg(func(e *enc) { e.u8(cmdAdd); e.str("gocuda/fuzz/n"); e.i64(3) })
	check := msg(func(e *enc) { e.u8(cmdCheck); e.keys([]string{"gocuda/fuzz/k", "gocuda/fuzz/n"}) })
	wait := msg(func(e *enc) { e.u8(cmdWait); e.keys([]string{"gocuda/fuzz/later"}) })
	left := msg(func(e *enc) { e.u8(cmdSet); e.str("gocuda/fuzz/left/1"); e.str("1") })
	for _, seed := range [][]byte{
		nil,
		hello,
		then(set, get, cas, cas, add, add, check),
		then(wait, []byte{cmdCancelWait}),
		then(wait, set, msg(func(e *enc) { e.u8(cmdSet); e.str("gocuda/fuzz/later"); e.str("") }), []byte{cmdCancelWait}),
		then(left),
		helloMsg("fuzz", 0, 4, roleWatcher),
		helloMsg("other", 1, 4, roleMember),
		msg(func(e *enc) { e.u8(cmdValidate); e.u32(validateMagic) }),
		{cmdValidate, 1, 2, 3, 4},
		then([]byte{0xFF}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s := newServer("fuzz", 4)
		s.handshake = time.Second
		srv, cli := net.Pipe()
		served := make(chan struct{})
		go func() {
			s.serveConn(srv)
			close(served)
		}()
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, cli) // the replies
			close(drained)
		}()
		cli.SetWriteDeadline(time.Now().Add(2 * time.Second))
		cli.Write(in) // fails when the server closes first: fine
		cli.Close()
		select {
		case <-served:
		case <-time.After(2 * time.Second):
			t.Fatalf("the server did not finish with %q within 2s", in)
		}
		<-drained
		s.Close()
	})
}
