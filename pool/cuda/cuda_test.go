package cuda_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/cuda"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// needDriverPool skips on devices without the driver's stream-ordered
// allocator (the host backend), after checking that New says so clearly.
func needDriverPool(t testing.TB) backend.Device {
	t.Helper()
	dev := pooltest.Device(t)
	src, err := pool.NewSource(dev, pool.Limits{})
	require.NoError(t, err)
	p, err := cuda.New(dev, src)
	if err != nil {
		require.True(t, errors.Is(err, backend.ErrNotSupported), "unexpected error: %v", err)
		assert.Contains(t, err.Error(), "CUDA backend")
		if os.Getenv("GOCUDA_BACKEND") == "cuda" {
			t.Fatalf("GOCUDA_BACKEND=cuda but the driver pool is unavailable: %v", err)
		}
		t.Skipf("no driver pool here: %v", err)
	}
	require.NoError(t, p.Close())
	return dev
}

func TestConformance(t *testing.T) {
	needDriverPool(t)
	pooltest.Suite{Name: "cuda", New: cuda.New, Retains: true}.Run(t)
}

func TestReclaimTrimsTheDriverPool(t *testing.T) {
	dev := needDriverPool(t)
	src, err := pool.NewSource(dev, pool.Limits{})
	require.NoError(t, err)
	p, err := cuda.New(dev, src)
	require.NoError(t, err)
	defer p.Close()
	s := pooltest.NewStream(t, dev)
	var blocks []*pool.Block
	for i := 0; i < 8; i++ {
		b, err := p.Alloc(32<<20, s)
		require.NoError(t, err)
		blocks = append(blocks, b)
	}
	for _, b := range blocks {
		require.NoError(t, p.Free(b, s))
	}
	require.NoError(t, s.Synchronize())
	before := p.Stats()
	assert.GreaterOrEqual(t, before.Reserved, uint64(256<<20), "freed memory stays cached under the default threshold")
	got := p.Reclaim(pool.All)
	after := p.Stats()
	assert.Equal(t, before.Reserved-after.Reserved, got)
	assert.Zero(t, after.Reserved)
}

func BenchmarkAllocFree(b *testing.B) {
	needDriverPool(b)
	pooltest.BenchAllocFree(b, cuda.New)
}

func BenchmarkParallel(b *testing.B) {
	needDriverPool(b)
	pooltest.BenchParallel(b, cuda.New)
}

func BenchmarkRefusal(b *testing.B) {
	needDriverPool(b)
	pooltest.BenchRefusal(b, cuda.New)
}
