package pooltest

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/pool"
)

// testBackend is made once per test binary: every test shares its device,
// as every pool of a program shares the GPU.
var testBackend = sync.OnceValue(func() backend.Backend {
	// The environment picks, as for any program: the host here, the GPU
	// with GOCUDA_BACKEND=cuda. This is the only line that picks.
	b, err := auto.Default()
	if err != nil {
		panic("pooltest: " + err.Error())
	}
	return b
})

// Device returns the device the pool tests run on: device 0 of the backend
// the environment selects. It is the single place that picks the backend.
func Device(t testing.TB) backend.Device {
	t.Helper()
	dev, err := testBackend().Device(0)
	require.NoError(t, err, "pooltest: no device to test on")
	return dev
}

// NewStream makes a stream on dev that is destroyed when the test ends.
func NewStream(t testing.TB, dev backend.Device) backend.Stream {
	t.Helper()
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Destroy() })
	return s
}

// Write queues a copy of data into device memory at p on s.
func Write(t testing.TB, dev backend.Device, p backend.Ptr, data []byte, s backend.Stream) {
	t.Helper()
	if len(data) == 0 {
		return
	}
	require.NoError(t, dev.CopyHtoD(p, unsafe.Pointer(&data[0]), uint64(len(data)), s))
}

// Read copies n bytes at p to the host after the work queued on s.
func Read(t testing.TB, dev backend.Device, p backend.Ptr, n uint64, s backend.Stream) []byte {
	t.Helper()
	out := make([]byte, n)
	if n > 0 {
		require.NoError(t, dev.CopyDtoH(unsafe.Pointer(&out[0]), p, n, s))
	}
	return out
}

// pattern32 returns n bytes holding the word v (native byte order) repeated,
// what Memset32(v) leaves in memory, built by doubling copies so that
// checking a 32 MiB block costs a memmove, not a loop the race detector
// instruments word by word.
func pattern32(v uint32, n uint64) []byte {
	out := make([]byte, n)
	if n == 0 {
		return out
	}
	var w [4]byte
	*(*uint32)(unsafe.Pointer(&w[0])) = v
	for i := 0; i < len(out) && i < 4; i++ {
		out[i] = w[i]
	}
	for done := min(4, len(out)); done < len(out); {
		done += copy(out[done:], out[:done])
	}
	return out
}

// readInto copies len(dst) bytes at p to dst after the work queued on s;
// for goroutines other than the test's, which must not call FailNow.
func readInto(dev backend.Device, dst []byte, p backend.Ptr, s backend.Stream) error {
	if len(dst) == 0 {
		return nil
	}
	return dev.CopyDtoH(unsafe.Pointer(&dst[0]), p, uint64(len(dst)), s)
}

// Open makes the strategy mk on Device(t) with limits l, and closes it when
// the test ends, failing the test if Close reports blocks still live.
func Open(t testing.TB, mk pool.Factory, l pool.Limits) (pool.Pool, *pool.Source) {
	t.Helper()
	dev := Device(t)
	src, err := pool.NewSource(dev, l)
	require.NoError(t, err)
	p, err := mk(dev, src)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p, src
}
