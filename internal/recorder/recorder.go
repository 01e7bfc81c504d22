package recorder

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Recorder writes one trace file. Every pool wrapped with it writes to
// that file, so a process with several devices has one trace; stream IDs
// are unique in the process, so the streams stay apart (replay then
// serves them all from one device).
type Recorder struct {
	path string

	mu     sync.Mutex
	f      *os.File
	zw     *gzip.Writer // nil unless path ends in .gz
	w      *bufio.Writer
	nextID uint64
	// ids maps each live recorded block to its trace id. A pool reuses
	// *Block values once freed, so an entry lives from Alloc to Free.
	ids          map[*pool.Block]uint64
	allocs       uint64
	frees        uint64
	headed       bool // the header has been written
	failed       bool // a write failed: recording has stopped
	closed       bool
	open         int // wrapped pools not yet closed
	buf          []byte
	workloadName string
}

// Create opens path for writing (truncating it) and returns a recorder
// writing to it, gzip-compressed when path ends in ".gz".
func Create(path string) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", path, err)
	}
	r := &Recorder{path: path, f: f, ids: map[*pool.Block]uint64{}, nextID: 1,
		workloadName: filepath.Base(os.Args[0])}
	var dst io.Writer = f
	if strings.HasSuffix(path, ".gz") {
		r.zw = gzip.NewWriter(f)
		dst = r.zw
	}
	r.w = bufio.NewWriterSize(dst, 64<<10)
	return r, nil
}

// Path is the file the recorder writes.
func (r *Recorder) Path() string { return r.path }

// header writes the comment lines replay shows; called with mu held,
// before the first event, when the first pool is known.
func (r *Recorder) header(p pool.Pool) {
	if r.headed {
		return
	}
	r.headed = true
	info := p.Device().Info()
	fmt.Fprintf(r.w, "# workload %s; gocuda pool %s; %s\n", r.workloadName, p.Name(), info.Name)
	fmt.Fprintf(r.w, "# recorder gocuda pool %s device %d\n", p.Name(), p.Device().Ordinal())
}

// Pool is a device pool whose allocations and frees are recorded. Every
// method but Alloc, Free and Close is the wrapped pool's.
type Pool struct {
	pool.Pool
	r    *Recorder
	once sync.Once
}

// Wrap returns p recording to r.
func (r *Recorder) Wrap(p pool.Pool) *Pool {
	r.mu.Lock()
	r.header(p)
	r.open++
	r.mu.Unlock()
	return &Pool{Pool: p, r: r}
}

// Unwrap returns the wrapped pool (gcpressure finds the Source through it).
func (w *Pool) Unwrap() pool.Pool { return w.Pool }

// Source is the wrapped pool's Source, nil if it has none.
func (w *Pool) Source() *pool.Source {
	if s, ok := w.Pool.(interface{ Source() *pool.Source }); ok {
		return s.Source()
	}
	return nil
}

func streamID(s backend.Stream) uint32 {
	if s == nil {
		return 0
	}
	return s.ID()
}

// Alloc is the wrapped pool's Alloc; a successful allocation is recorded
// with the size asked for.
func (w *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	b, err := w.Pool.Alloc(size, s)
	if err == nil {
		w.r.alloc(b, size, streamID(s))
	}
	return b, err
}

// Free records the free of a recorded block and then frees it. The free
// is written first: once the wrapped pool has the block, another
// goroutine may be handed it, and its allocation must come after.
func (w *Pool) Free(b *pool.Block, s backend.Stream) error {
	w.r.free(b)
	return w.Pool.Free(b, s)
}

// Close closes the wrapped pool and flushes the trace; closing the last
// pool wrapped by the recorder closes the trace file.
func (w *Pool) Close() error {
	err := w.Pool.Close()
	var ferr error
	w.once.Do(func() {
		w.r.mu.Lock()
		w.r.open--
		last := w.r.open == 0
		w.r.mu.Unlock()
		if last {
			ferr = w.r.Close()
		} else {
			ferr = w.r.Flush()
		}
	})
	if err == nil {
		err = ferr
	}
	return err
}

func (r *Recorder) alloc(b *pool.Block, size uint64, stream uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed || r.closed {
		return
	}
	id := r.nextID
	r.nextID++
	r.ids[b] = id
	r.allocs++
	r.buf = append(r.buf[:0], "a "...)
	r.buf = strconv.AppendUint(r.buf, id, 10)
	r.buf = append(r.buf, ' ')
	r.buf = strconv.AppendUint(r.buf, size, 10)
	r.buf = append(r.buf, ' ')
	r.buf = strconv.AppendUint(r.buf, uint64(stream), 10)
	r.buf = append(r.buf, '\n')
	r.write(r.buf)
}

func (r *Recorder) free(b *pool.Block) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.ids[b]
	if !ok || r.failed || r.closed {
		// Not recorded (allocated before recording stopped, or a bad
		// free the wrapped pool will refuse): nothing to write.
		return
	}
	delete(r.ids, b)
	r.frees++
	r.buf = append(r.buf[:0], "f "...)
	r.buf = strconv.AppendUint(r.buf, id, 10)
	r.buf = append(r.buf, '\n')
	r.write(r.buf)
}

// write is called with mu held.
func (r *Recorder) write(p []byte) {
	if _, err := r.w.Write(p); err != nil {
		r.fail(err)
	}
}

// fail reports a write error once and stops recording: the program goes
// on, and the trace ends where the error was.
func (r *Recorder) fail(err error) {
	if r.failed {
		return
	}
	r.failed = true
	r.ids = nil
	slog.Error("gocuda: GOCUDA_TRACE: writing the trace failed; recording stopped", "file", r.path, "err", err)
}

// Flush writes what is buffered to the file (ending the gzip stream's
// current block, so that what is there can be read). The trace stays open.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flush()
}

func (r *Recorder) flush() error {
	if r.failed {
		return fmt.Errorf("gocuda: GOCUDA_TRACE=%s: an earlier write failed; the trace is cut short", r.path)
	}
	if r.closed {
		return nil
	}
	err := r.w.Flush()
	if err == nil && r.zw != nil {
		err = r.zw.Flush()
	}
	if err != nil {
		r.fail(err)
		return fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", r.path, err)
	}
	return nil
}

// Close writes a closing comment with the counts, flushes, ends the gzip
// stream and closes the file. Later allocations are not recorded.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if !r.failed {
		fmt.Fprintf(r.w, "# end allocs %d frees %d\n", r.allocs, r.frees)
	}
	err := r.flush()
	r.closed = true
	if r.zw != nil {
		if zerr := r.zw.Close(); err == nil && zerr != nil && !r.failed {
			err = fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", r.path, zerr)
		}
	}
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", r.path, cerr)
	}
	return err
}
