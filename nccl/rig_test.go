package nccl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/nccl"
)

// The tests run on the host backend, with as many host devices as ranks;
// with GOCUDA_BACKEND=cuda they run on GPUs, one rank per GPU, and skip
// (saying why) where there are fewer GPUs than ranks or no NCCL.

func onGPU() bool { return os.Getenv("GOCUDA_BACKEND") == "cuda" }

// devices returns the backend and n of its devices for n ranks.
func devices(t testing.TB, n int) (backend.Backend, []backend.Device) {
	t.Helper()
	var b backend.Backend
	if onGPU() {
		cb, err := cudabackend.Open()
		require.NoError(t, err, "GOCUDA_BACKEND=cuda but the CUDA backend cannot be used")
		if cb.DeviceCount() < n {
			t.Skipf("needs %d GPUs for %d ranks (NCCL takes one rank per device); this machine has %d", n, n, cb.DeviceCount())
		}
		if _, err := nccl.Library(); err != nil {
			t.Skipf("no NCCL on this GPU machine: %v", err)
		}
		b = cb
	} else {
		b = host.New(host.Options{Devices: n})
	}
	devs := make([]backend.Device, n)
	for i := range devs {
		d, err := b.Device(i)
		require.NoError(t, err)
		devs[i] = d
	}
	return b, devs
}

// hostOnly skips tests of what only the host implementation does.
func hostOnly(t *testing.T, why string) {
	if onGPU() {
		t.Skip("host backend only: " + why)
	}
}

// rig is n ranks made by NewComms, a stream each, driven from the test's
// goroutine inside Group.
type rig struct {
	b       backend.Backend
	devs    []backend.Device
	comms   []*nccl.Comm
	streams []backend.Stream
}

func newRig(t *testing.T, n int) *rig {
	t.Helper()
	b, devs := devices(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	comms, err := nccl.NewComms(ctx, devs)
	require.NoError(t, err)
	r := &rig{b: b, devs: devs, comms: comms}
	for i, d := range devs {
		s := stream(t, d)
		r.streams = append(r.streams, s)
		assert.Equal(t, i, comms[i].Rank())
		assert.Equal(t, n, comms[i].Size())
		assert.Equal(t, d, comms[i].Device())
	}
	t.Cleanup(func() {
		for _, c := range comms {
			assert.NoError(t, c.Destroy())
		}
	})
	return r
}

func stream(t testing.TB, d backend.Device) backend.Stream {
	t.Helper()
	s, err := d.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Destroy()) })
	return s
}

// sync waits for every rank's stream and checks that no communicator
// failed.
func (r *rig) sync(t *testing.T) {
	t.Helper()
	for i, s := range r.streams {
		require.NoError(t, s.Synchronize())
		require.NoError(t, r.comms[i].Err())
	}
}

// buf is device memory holding data, freed when the test ends.
func buf(t testing.TB, d backend.Device, s backend.Stream, data []byte) backend.Ptr {
	t.Helper()
	p, err := d.Alloc(uint64(max(len(data), 8)))
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, s.Synchronize())
		assert.NoError(t, d.Free(p))
	})
	if len(data) > 0 {
		require.NoError(t, d.CopyHtoD(p, unsafe.Pointer(&data[0]), uint64(len(data)), s))
	}
	return p
}

func read(t testing.TB, d backend.Device, s backend.Stream, p backend.Ptr, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	if n > 0 {
		require.NoError(t, d.CopyDtoH(unsafe.Pointer(&out[0]), p, uint64(n), s))
	}
	return out
}

// The test data: small nonzero integers, exact in every type, whose sums
// and products over 4 ranks fit int8 and uint8.
var (
	signedValues   = []float64{-2, -1, 1, 2, 3}
	unsignedValues = []float64{1, 2, 3}
)

func isUnsigned(dt nccl.DataType) bool {
	return dt == nccl.Uint8 || dt == nccl.Uint32 || dt == nccl.Uint64
}

func isFloat(dt nccl.DataType) bool {
	return dt == nccl.Float16 || dt == nccl.Float32 || dt == nccl.Float64 || dt == nccl.BFloat16
}

// values is rank's input: count elements, different on every rank.
func values(dt nccl.DataType, rank, count int) []float64 {
	vs := signedValues
	if isUnsigned(dt) {
		vs = unsignedValues
	}
	out := make([]float64, count)
	for i := range out {
		out[i] = vs[(rank*3+i*2+i/len(vs))%len(vs)]
	}
	return out
}

// reference reduces in float64 with the type's rules: integer Avg
// truncates the sum's quotient; floating-point Avg sums x·(1/n), exact
// for the rank counts tested.
func reference(dt nccl.DataType, red nccl.Op, inputs [][]float64) []float64 {
	n := len(inputs)
	out := make([]float64, len(inputs[0]))
	for i := range out {
		acc := inputs[0][i]
		for _, in := range inputs[1:] {
			switch red {
			case nccl.Sum, nccl.Avg:
				acc += in[i]
			case nccl.Prod:
				acc *= in[i]
			case nccl.Max:
				acc = math.Max(acc, in[i])
			case nccl.Min:
				acc = math.Min(acc, in[i])
			}
		}
		if red == nccl.Avg {
			acc /= float64(n)
			if !isFloat(dt) {
				acc = math.Trunc(acc)
			}
		}
		out[i] = acc
	}
	return out
}

// encode writes exact small values in dt's layout.
func encode(dt nccl.DataType, vs []float64) []byte {
	out := make([]byte, 0, len(vs)*dt.Size())
	for _, v := range vs {
		switch dt {
		case nccl.Int8, nccl.Uint8:
			out = append(out, byte(int8(v)))
		case nccl.Int32, nccl.Uint32:
			out = binary.LittleEndian.AppendUint32(out, uint32(int32(v)))
		case nccl.Int64, nccl.Uint64:
			out = binary.LittleEndian.AppendUint64(out, uint64(int64(v)))
		case nccl.Float32:
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(v)))
		case nccl.Float64:
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		case nccl.BFloat16:
			out = binary.LittleEndian.AppendUint16(out, uint16(math.Float32bits(float32(v))>>16))
		case nccl.Float16:
			out = binary.LittleEndian.AppendUint16(out, exactHalf(v))
		}
	}
	return out
}

// exactHalf is the binary16 of v, a value with at most 11 significant
// bits and a normal exponent, written from the definition.
func exactHalf(v float64) uint16 {
	var sign uint16
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	if v == 0 {
		return sign
	}
	frac, exp := math.Frexp(v) // v = frac × 2^exp, frac in [0.5, 1)
	mant := uint16((frac*2 - 1) * 1024)
	return sign | uint16(exp-1+15)<<10 | mant
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var errTest = errors.New("test failure")
