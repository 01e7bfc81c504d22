package recorder

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
)

// slowFile takes a while for every write, as a full or remote disk may.
type slowFile struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	closed bool
}

func (f *slowFile) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	return f.buf.Write(p)
}

func (f *slowFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// A writer slower than the program: events wait for room rather than
// piling up in memory or being dropped.
func TestASlowFileHoldsTheProgramNotTheMemory(t *testing.T) {
	f := &slowFile{}
	r := newRecorder("slow.trace", f)
	const pairs = 100_000
	var blocks [64]pool.Block
	for i := range pairs {
		b := &blocks[i%len(blocks)]
		r.alloc(b, 1<<63+uint64(i), 1)
		r.free(b)
	}
	held := r.PeakHeld()
	require.NoError(t, r.Close())
	bound := (MaxQueued + 2) * ChunkSize
	t.Logf("%d KiB written in %d writes; at most %d KiB held (bound %d KiB)", f.buf.Len()>>10, f.writes, held>>10, bound>>10)
	assert.LessOrEqual(t, held, bound)
	assert.Greater(t, f.buf.Len(), 2*bound)
	assert.True(t, f.closed)
	assert.Equal(t, 2*pairs+1, bytes.Count(f.buf.Bytes(), []byte("\n")), "every event and the end line")
	assert.True(t, bytes.HasSuffix(f.buf.Bytes(), []byte("# end allocs 100000 frees 100000\n")))
}
