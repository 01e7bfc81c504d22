package rendezvous

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The wire protocol is a subset of torch.distributed's TCPStore (so that
// the same client serves torchrun's agent store), with two additions of
// our own server: HELLO and the error frame. All integers are
// little-endian; a string or byte vector is a uint64 length, then the
// bytes.
const (
	cmdValidate   = 0  // uint32 magic; the first message; no reply
	cmdSet        = 1  // key, value; no reply
	cmdCompareSet = 2  // key, expected, desired; reply: the value after
	cmdGet        = 3  // key (which must exist); reply: the value
	cmdAdd        = 4  // key, int64; reply: the new value (stored as decimal text)
	cmdCheck      = 5  // n, n keys; reply: checkReady or checkNotReady
	cmdWait       = 6  // n, n keys; reply: waitStop once all exist
	cmdCancelWait = 12 // reply: waitCanceled (after a waitStop if it came meanwhile)

	// cmdHello is ours, above torch's range, never sent to torch's agent:
	// job, rank int64, size int64, role byte, host, pid int64. Reply: a
	// status byte, helloOK or helloRefused followed by the reason.
	cmdHello = 0x80

	// errFrame is what our server writes, with a reason, before it
	// closes a connection that broke the protocol.
	errFrame = 0xFF

	validateMagic = 0x3C85F7CE

	checkReady    = 0
	checkNotReady = 1
	waitStop      = 0
	waitCanceled  = 1

	helloOK      = 0
	helloRefused = 1

	roleMember  = 0
	roleWatcher = 1
)

// Bounds on what a peer may send, so that a malformed or hostile stream
// cannot make the server allocate without limit.
const (
	maxValue    = 1 << 20 // bytes in a key or value
	maxKeys     = 4096    // keys in one CHECK or WAIT
	maxWaits    = 64      // WAITs pending on one connection
	maxHelloStr = 4096    // bytes in HELLO's job and host
)

// enc builds one message, written at once.
type enc struct{ b []byte }

func (e *enc) u8(v byte)    { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }
func (e *enc) str(s string) { e.u64(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) vec(b []byte) { e.u64(uint64(len(b))); e.b = append(e.b, b...) }
func (e *enc) keys(k []string) {
	e.u64(uint64(len(k)))
	for _, s := range k {
		e.str(s)
	}
}

// errTooLong is a length over a bound: the stream is not one we serve.
var errTooLong = errors.New("too long")

func readU8(r *bufio.Reader) (byte, error) { return r.ReadByte() }

func readU32(r *bufio.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func readU64(r *bufio.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// readVec reads a length and that many bytes, at most max. A long vector
// is read as it arrives rather than allocated up front, so that a length
// the peer never backs with bytes costs nothing.
func readVec(r *bufio.Reader, max int) ([]byte, error) {
	n, err := readU64(r)
	if err != nil {
		return nil, err
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errTooLong, n, max)
	}
	if n <= 4096 {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

func readStr(r *bufio.Reader, max int) (string, error) {
	b, err := readVec(r, max)
	return string(b), err
}

func readKeys(r *bufio.Reader) ([]string, error) {
	n, err := readU64(r)
	if err != nil {
		return nil, err
	}
	if n > maxKeys {
		return nil, fmt.Errorf("%w: %d keys, at most %d", errTooLong, n, maxKeys)
	}
	keys := make([]string, 0, n)
	for range n {
		k, err := readStr(r, maxValue)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// cmdName names a command byte for errors.
func cmdName(c byte) string {
	switch c {
	case cmdValidate:
		return "VALIDATE"
	case cmdSet:
		return "SET"
	case cmdCompareSet:
		return "COMPARE_SET"
	case cmdGet:
		return "GET"
	case cmdAdd:
		return "ADD"
	case cmdCheck:
		return "CHECK"
	case cmdWait:
		return "WAIT"
	case cmdCancelWait:
		return "CANCEL_WAIT"
	case cmdHello:
		return "HELLO"
	}
	return fmt.Sprintf("0x%02x", c)
}
