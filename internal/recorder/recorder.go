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
	"time"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

const (
	// FlushPeriod is the longest an event waits in memory: the writer
	// writes what has gathered and flushes the file (ending the gzip
	// stream's current block, so that a reader decodes up to there) this
	// often. A program that exits or crashes without StopTrace loses at
	// most the events of its last FlushPeriod.
	FlushPeriod = 100 * time.Millisecond
	// ChunkSize is how much trace text gathers before it is handed to the
	// writer at once, without waiting for FlushPeriod.
	ChunkSize = 64 << 10
	// MaxQueued is the most full chunks waiting for, or being written by,
	// the writer. An event that would queue one more waits until the
	// writer has written one: the trace text in memory stays under
	// (MaxQueued+2)*ChunkSize (1.1 MiB) however long the run, and a
	// writer slower than the program slows the program rather than
	// losing events.
	MaxQueued = 16
)

// chunkFull is when the current chunk is handed over: before it passes
// ChunkSize with the longest event line (a, three 20-digit numbers).
const chunkFull = ChunkSize - 80

// Recorder writes one trace file. Every pool wrapped with it writes to
// that file, so a process with several devices has one trace; stream IDs
// are unique in the process, so the streams stay apart (replay then
// serves them all from one device).
//
// Allocations and frees append a line to an in-memory chunk under one
// mutex and never touch the file: a writer goroutine takes full chunks as
// they come and the partial one every FlushPeriod, writes them and
// flushes, so that the file holds the trace up to the last flush whether
// or not the program ever stops the recording.
type Recorder struct {
	path string
	// Owned by the writer goroutine (and by Close once it has ended).
	f  io.WriteCloser // the file
	zw *gzip.Writer   // nil unless path ends in .gz
	bw *bufio.Writer  // between zw and f, so a flush is one write
	// out is where chunks go: zw, or f for plain text.
	out io.Writer

	mu   sync.Mutex
	cond *sync.Cond // the writer finished a batch, or recording stopped
	cur  []byte     // the chunk events are appended to
	// queue holds full chunks not yet taken by the writer; queued counts
	// them with those the writer is writing, and queuedBytes their bytes.
	queue       [][]byte
	queued      int
	queuedBytes int
	spare       [][]byte // written chunks, for reuse
	waiters     []chan error
	// peakHeld is the most trace text held in memory at once (cur and
	// the queued chunks).
	peakHeld int
	nextID   uint64
	// ids maps each live recorded block to its trace id. A pool reuses
	// *Block values once freed, so an entry lives from Alloc to Free.
	ids          map[*pool.Block]uint64
	allocs       uint64
	frees        uint64
	headed       bool  // the header has been written
	failed       bool  // a write failed: recording has stopped
	werr         error // that write's error
	closed       bool
	open         int // wrapped pools not yet closed
	workloadName string

	wake     chan struct{} // a chunk is queued, a flush asked for, or Close
	done     chan struct{} // the writer has ended
	closeErr error         // set by the writer before done
}

// Create opens path for writing (truncating it) and returns a recorder
// writing to it, gzip-compressed when path ends in ".gz", and starts its
// writer goroutine, which runs until Close.
func Create(path string) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", path, err)
	}
	return newRecorder(path, f), nil
}

// newRecorder records to f, compressing when path ends in ".gz".
func newRecorder(path string, f io.WriteCloser) *Recorder {
	r := &Recorder{path: path, f: f, out: f, ids: map[*pool.Block]uint64{}, nextID: 1,
		workloadName: filepath.Base(os.Args[0]),
		cur:          make([]byte, 0, ChunkSize),
		wake:         make(chan struct{}, 1), done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	if strings.HasSuffix(path, ".gz") {
		r.bw = bufio.NewWriterSize(f, 64<<10)
		// The fastest level: about 4 times the speed of the default for
		// 20 % more bytes, so that the writer keeps up with a program
		// allocating millions of times a second.
		r.zw, _ = gzip.NewWriterLevel(r.bw, gzip.BestSpeed)
		r.out = r.zw
	}
	go r.run()
	return r
}

// Path is the file the recorder writes.
func (r *Recorder) Path() string { return r.path }

// PeakHeld is the most trace text the recorder has held in memory at once,
// in bytes: under (MaxQueued+2)*ChunkSize however long the run.
func (r *Recorder) PeakHeld() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peakHeld
}

// header writes the comment lines replay shows; called with mu held,
// before the first event, when the first pool is known.
func (r *Recorder) header(p pool.Pool) {
	if r.headed || !r.room() {
		return
	}
	r.headed = true
	info := p.Device().Info()
	r.cur = fmt.Appendf(r.cur, "# workload %s; gocuda pool %s; %s\n", r.workloadName, p.Name(), info.Name)
	r.cur = fmt.Appendf(r.cur, "# recorder gocuda pool %s device %d\n", p.Name(), p.Device().Ordinal())
	r.grew()
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
	if !r.room() {
		return
	}
	id := r.nextID
	r.nextID++
	r.ids[b] = id
	r.allocs++
	r.cur = append(r.cur, "a "...)
	r.cur = strconv.AppendUint(r.cur, id, 10)
	r.cur = append(r.cur, ' ')
	r.cur = strconv.AppendUint(r.cur, size, 10)
	r.cur = append(r.cur, ' ')
	r.cur = strconv.AppendUint(r.cur, uint64(stream), 10)
	r.cur = append(r.cur, '\n')
	r.grew()
}

func (r *Recorder) free(b *pool.Block) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed || r.closed {
		return
	}
	if _, ok := r.ids[b]; !ok {
		// Not recorded (allocated before recording started, or a bad
		// free the wrapped pool will refuse): nothing to write.
		return
	}
	if !r.room() {
		return
	}
	// Looked up again: room may have let go of mu while it waited.
	id, ok := r.ids[b]
	if !ok {
		return
	}
	delete(r.ids, b)
	r.frees++
	r.cur = append(r.cur, "f "...)
	r.cur = strconv.AppendUint(r.cur, id, 10)
	r.cur = append(r.cur, '\n')
	r.grew()
}

// room makes room in cur for one more line, handing a full chunk to the
// writer; it reports false once recording has stopped. Called with mu
// held; while MaxQueued chunks wait for the writer, it waits for one to
// be written (letting go of mu meanwhile).
func (r *Recorder) room() bool {
	for !r.failed && !r.closed && len(r.cur) >= chunkFull {
		if r.queued >= MaxQueued {
			r.cond.Wait()
			continue
		}
		r.queue = append(r.queue, r.cur)
		r.queued++
		r.queuedBytes += len(r.cur)
		r.cur = r.newChunk()
		r.kick()
	}
	return !r.failed && !r.closed
}

// newChunk is an empty chunk, a written one if there is one; called with
// mu held.
func (r *Recorder) newChunk() []byte {
	if n := len(r.spare); n > 0 {
		c := r.spare[n-1]
		r.spare = r.spare[:n-1]
		return c
	}
	return make([]byte, 0, ChunkSize)
}

// grew notes the trace text held after a line was appended to cur;
// called with mu held.
func (r *Recorder) grew() {
	r.peakHeld = max(r.peakHeld, len(r.cur)+r.queuedBytes)
}

func (r *Recorder) kick() {
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// run is the writer goroutine: on every wake-up and every FlushPeriod it
// takes the queued chunks and the current one, writes them and flushes,
// until Close.
func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(FlushPeriod)
	defer tick.Stop()
	var batch [][]byte
	for {
		select {
		case <-r.wake:
		case <-tick.C:
		}
		r.mu.Lock()
		batch = append(batch[:0], r.queue...)
		r.queue = r.queue[:0]
		if len(r.cur) > 0 && !r.failed {
			// Counted as queued while it is written, like the others.
			batch = append(batch, r.cur)
			r.queued++
			r.queuedBytes += len(r.cur)
			r.cur = r.newChunk()
		}
		waiters := r.waiters
		r.waiters = nil
		closing, failed := r.closed, r.failed
		r.mu.Unlock()

		var err error
		if !failed && len(batch) > 0 {
			err = r.write(batch)
		}

		r.mu.Lock()
		if err != nil {
			r.fail(err)
		}
		r.queued -= len(batch)
		// Keep enough chunks to refill the queue without allocating; the
		// rest are left to the collector.
		for _, c := range batch {
			r.queuedBytes -= len(c)
			if len(r.spare) < MaxQueued {
				r.spare = append(r.spare, c[:0])
			}
		}
		clear(batch)
		r.cond.Broadcast()
		werr := r.werr
		r.mu.Unlock()
		for _, w := range waiters {
			w <- werr
		}
		if closing {
			r.closeErr = r.finish()
			return
		}
	}
}

// write writes the chunks and flushes them to the file. Only the writer
// goroutine calls it.
func (r *Recorder) write(batch [][]byte) error {
	for _, c := range batch {
		if _, err := r.out.Write(c); err != nil {
			return err
		}
	}
	if r.zw == nil {
		return nil
	}
	// A sync flush ends the deflate block: a reader of the file decodes
	// everything written so far, and the compression history is kept.
	if err := r.zw.Flush(); err != nil {
		return err
	}
	return r.bw.Flush()
}

// finish ends the gzip stream and closes the file, once the last batch
// is written; the error is the first of the recording's.
func (r *Recorder) finish() error {
	r.mu.Lock()
	err := r.werr
	r.mu.Unlock()
	if err != nil {
		err = r.cutShort()
	}
	if r.zw != nil && err == nil {
		if zerr := r.zw.Close(); zerr != nil {
			err = fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", r.path, zerr)
		} else if ferr := r.bw.Flush(); ferr != nil {
			err = fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", r.path, ferr)
		}
	}
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gocuda: GOCUDA_TRACE=%s: %w", r.path, cerr)
	}
	return err
}

func (r *Recorder) cutShort() error {
	return fmt.Errorf("gocuda: GOCUDA_TRACE=%s: an earlier write failed; the trace is cut short", r.path)
}

// fail reports a write error once and stops recording: the program goes
// on, and the trace ends where the error was. Called with mu held.
func (r *Recorder) fail(err error) {
	if r.failed {
		return
	}
	r.failed, r.werr = true, err
	r.ids = nil
	// What waits to be written never will be.
	for _, c := range r.queue {
		r.queued--
		r.queuedBytes -= len(c)
	}
	clear(r.queue)
	r.queue = r.queue[:0]
	r.cur = r.cur[:0]
	slog.Error("gocuda: GOCUDA_TRACE: writing the trace failed; recording stopped", "file", r.path, "err", err)
}

// Flush writes what is buffered to the file and flushes it (ending the
// gzip stream's current block, so that what is there can be read), and
// returns once it is there. The trace stays open. The writer does the
// same every FlushPeriod unasked.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	if r.failed {
		r.mu.Unlock()
		return r.cutShort()
	}
	ch := make(chan error, 1)
	r.waiters = append(r.waiters, ch)
	r.kick()
	r.mu.Unlock()
	select {
	case err := <-ch:
		if err != nil {
			return r.cutShort()
		}
		return nil
	case <-r.done:
		// Closed meanwhile: Close wrote everything out.
		return nil
	}
}

// Close writes a closing comment with the counts, writes out everything,
// ends the gzip stream and closes the file. Later allocations are not
// recorded. It is not needed for the file to be readable (the writer
// flushes every FlushPeriod); it adds the last events and the end line.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return nil
	}
	if !r.failed {
		r.cur = fmt.Appendf(r.cur, "# end allocs %d frees %d\n", r.allocs, r.frees)
		r.grew()
	}
	r.closed = true
	// Wake events waiting for room: recording has stopped.
	r.cond.Broadcast()
	r.kick()
	r.mu.Unlock()
	<-r.done
	return r.closeErr
}
