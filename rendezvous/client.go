package rendezvous

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// client is one connection to a TCPStore: ours or torchrun's agent's.
// Its calls are not safe for concurrent use (Member serializes them).
type client struct {
	conn net.Conn
	r    *bufio.Reader

	// dmu and gen make a context's cancellation cut short only the call
	// it was armed for.
	dmu sync.Mutex
	gen uint64

	// broken is set when a call ended in the middle of a message: the
	// stream is out of step, and every later call fails with it. The
	// connection stays open (our server would take its closing for this
	// rank's death) until Close.
	broken error
}

// cancelTimeout bounds CANCEL_WAIT's exchange after a WAIT timed out.
const cancelTimeout = 5 * time.Second

// aLongTimeAgo is a deadline in the past: it makes a blocked read or
// write return at once.
var aLongTimeAgo = time.Unix(1, 0)

func newClient(c net.Conn) *client { return &client{conn: c, r: bufio.NewReader(c)} }

func (c *client) Close() error { return c.conn.Close() }

// arm sets the connection's deadline to ctx's, and cuts it short when ctx
// is cancelled; disarm undoes it.
func (c *client) arm(ctx context.Context) (disarm func()) {
	d, _ := ctx.Deadline()
	c.dmu.Lock()
	c.gen++
	g := c.gen
	c.conn.SetDeadline(d)
	c.dmu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		c.dmu.Lock()
		if c.gen == g {
			c.conn.SetDeadline(aLongTimeAgo)
		}
		c.dmu.Unlock()
	})
	return func() {
		stop()
		c.dmu.Lock()
		c.gen++
		c.conn.SetDeadline(time.Time{})
		c.dmu.Unlock()
	}
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// call writes msg and runs read for the reply (nil: none), under ctx.
func (c *client) call(ctx context.Context, msg []byte, read func() error) error {
	if c.broken != nil {
		return c.broken
	}
	disarm := c.arm(ctx)
	defer disarm()
	if _, err := c.conn.Write(msg); err != nil {
		c.broken = err
		return err
	}
	if read != nil {
		if err := read(); err != nil {
			c.broken = err
			return err
		}
	}
	return nil
}

// readByteReply reads a one-byte reply; our server's error frame in its
// place becomes the error it carries.
func (c *client) readByteReply(what string) (byte, error) {
	b, err := readU8(c.r)
	if err != nil {
		return 0, err
	}
	if b == errFrame {
		msg, err := readStr(c.r, maxValue)
		if err != nil {
			return 0, fmt.Errorf("the server answered %s with an error it did not finish: %w", what, err)
		}
		return 0, errors.New(msg)
	}
	return b, nil
}

func (c *client) validate(ctx context.Context) error {
	var e enc
	e.u8(cmdValidate)
	e.u32(validateMagic)
	return c.call(ctx, e.b, nil)
}

// hello introduces this rank to our server: refusal is its reason when
// it refused.
func (c *client) hello(ctx context.Context, job string, rank, size int, role byte, host string, pid int) (refusal string, err error) {
	var e enc
	e.u8(cmdHello)
	e.str(job)
	e.i64(int64(rank))
	e.i64(int64(size))
	e.u8(role)
	e.str(host)
	e.i64(int64(pid))
	err = c.call(ctx, e.b, func() error {
		b, err := c.readByteReply("HELLO")
		if err != nil {
			return err
		}
		switch b {
		case helloOK:
			return nil
		case helloRefused:
			refusal, err = readStr(c.r, maxValue)
			return err
		}
		return fmt.Errorf("HELLO's reply is %d, neither ok (0) nor refused (1)", b)
	})
	return refusal, err
}

func (c *client) set(ctx context.Context, key string, value []byte) error {
	var e enc
	e.u8(cmdSet)
	e.str(key)
	e.vec(value)
	return c.call(ctx, e.b, nil)
}

// compareSet sets key to desired if it holds expected ("" : if it is
// absent) and returns what it holds after.
func (c *client) compareSet(ctx context.Context, key string, expected, desired []byte) (got []byte, err error) {
	var e enc
	e.u8(cmdCompareSet)
	e.str(key)
	e.vec(expected)
	e.vec(desired)
	err = c.call(ctx, e.b, func() error {
		got, err = readVec(c.r, maxValue)
		return err
	})
	return got, err
}

// get reads a key that exists (WAIT first: torch's server fails a GET of
// a missing key).
func (c *client) get(ctx context.Context, key string) (v []byte, err error) {
	var e enc
	e.u8(cmdGet)
	e.str(key)
	err = c.call(ctx, e.b, func() error {
		v, err = readVec(c.r, maxValue)
		return err
	})
	return v, err
}

func (c *client) add(ctx context.Context, key string, d int64) (n int64, err error) {
	var e enc
	e.u8(cmdAdd)
	e.str(key)
	e.i64(d)
	err = c.call(ctx, e.b, func() error {
		u, err := readU64(c.r)
		n = int64(u)
		return err
	})
	return n, err
}

// check says whether every key exists.
func (c *client) check(ctx context.Context, keys []string) (ready bool, err error) {
	var e enc
	e.u8(cmdCheck)
	e.keys(keys)
	err = c.call(ctx, e.b, func() error {
		b, err := c.readByteReply("CHECK")
		if err != nil {
			return err
		}
		if b != checkReady && b != checkNotReady {
			return fmt.Errorf("CHECK's reply is %d, neither ready (0) nor not ready (1)", b)
		}
		ready = b == checkReady
		return nil
	})
	return ready, err
}

// wait returns once every key exists, or with a timeout error when ctx
// ends first; then it cancels the wait on the server (CANCEL_WAIT, as
// torch's client does), so that the connection stays in step.
func (c *client) wait(ctx context.Context, keys []string) error {
	if c.broken != nil {
		return c.broken
	}
	var e enc
	e.u8(cmdWait)
	e.keys(keys)
	disarm := c.arm(ctx)
	if _, err := c.conn.Write(e.b); err != nil {
		disarm()
		c.broken = err
		return err
	}
	b, err := c.readByteReply("WAIT")
	disarm()
	switch {
	case err == nil && b == waitStop:
		return nil
	case err == nil:
		c.broken = fmt.Errorf("WAIT's reply is %d, not stop-waiting (0)", b)
		return c.broken
	case !isTimeout(err):
		c.broken = err
		return err
	}
	if cerr := c.cancelWait(); cerr != nil {
		c.broken = fmt.Errorf("cancelling a WAIT that timed out: %w", cerr)
	}
	return err
}

func (c *client) cancelWait() error {
	c.dmu.Lock()
	c.gen++
	c.conn.SetDeadline(time.Now().Add(cancelTimeout))
	c.dmu.Unlock()
	defer c.conn.SetDeadline(time.Time{})
	if _, err := c.conn.Write([]byte{cmdCancelWait}); err != nil {
		return err
	}
	b, err := c.readByteReply("CANCEL_WAIT")
	if err == nil && b == waitStop {
		// The wait was met meanwhile: its reply comes first.
		b, err = c.readByteReply("CANCEL_WAIT")
	}
	if err != nil {
		return err
	}
	if b != waitCanceled {
		return fmt.Errorf("CANCEL_WAIT's reply is %d, not wait-canceled (1)", b)
	}
	return nil
}
