package kernels_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/kernels"
)

func TestDType(t *testing.T) {
	cases := []struct {
		dt   kernels.DType
		name string
		size int
	}{
		{kernels.Float32, "float32", 4},
		{kernels.Float64, "float64", 8},
		{kernels.Int32, "int32", 4},
		{kernels.Int64, "int64", 8},
		{kernels.Uint8, "uint8", 1},
		{kernels.Complex64, "complex64", 8},
	}
	for _, c := range cases {
		assert.Equal(t, c.name, c.dt.String())
		assert.Equal(t, c.size, c.dt.Size())
		assert.True(t, c.dt.Valid())
	}
	assert.Equal(t, kernels.Float32, kernels.DTypeOf[float32]())
	assert.Equal(t, kernels.Complex64, kernels.DTypeOf[complex64]())
	assert.Equal(t, kernels.Uint8, kernels.DTypeOf[byte]())
	assert.False(t, kernels.DType(0).Valid())
	assert.Equal(t, "DType(0)", kernels.DType(0).String())
	assert.Equal(t, 0, kernels.DType(99).Size())
}

func TestArgumentErrors(t *testing.T) {
	e := newEnv(t)
	x := alloc[float32](t, e, 16, false)
	d := alloc[float64](t, e, 16, false)
	cases := []struct {
		name     string
		err      error
		is       error
		contains []string
	}{
		{"negative n", kernels.Add[float32](e.dev, e.s, x.p, x.p, x.p, -1),
			backend.ErrInvalidValue, []string{"Add float32", "n = -1"}},
		{"nil pointer", kernels.Add[float32](e.dev, e.s, x.p, 0, x.p, 4),
			backend.ErrInvalidValue, []string{"Add float32", "pointer a is nil"}},
		{"misaligned", kernels.Exp[float64](e.dev, e.s, d.p, d.p+4, 4),
			backend.ErrInvalidValue, []string{"Exp float64", "not 8-byte aligned"}},
		{"Exp of int32", kernels.Exp[int32](e.dev, e.s, x.p, x.p, 4),
			kernels.ErrUnsupportedDType, []string{"Exp does not take int32", "it takes float32, float64"}},
		{"Axpy of uint8", kernels.Axpy[uint8](e.dev, e.s, 2, x.p, x.p, 4),
			kernels.ErrUnsupportedDType, []string{"Axpy", "uint8", "float32, float64, complex64"}},
		{"Scale of int64", kernels.Scale[int64](e.dev, e.s, 2, d.p, 4),
			kernels.ErrUnsupportedDType, []string{"Scale", "int64"}},
		{"ReluGrad of complex64", kernels.ReluGrad[complex64](e.dev, e.s, d.p, d.p, d.p, 2),
			kernels.ErrUnsupportedDType, []string{"ReluGrad", "complex64"}},
		{"SumRows of int32", kernels.SumRows[int32](e.dev, e.s, x.p, x.p, 2, 2),
			kernels.ErrUnsupportedDType, []string{"SumRows", "int32"}},
		{"negative shape", kernels.SumRows[float32](e.dev, e.s, x.p, x.p, 2, -2),
			backend.ErrInvalidValue, []string{"SumRows float32", "negative"}},
		{"nil device", kernels.Fill[float32](nil, e.s, x.p, 1, 4),
			backend.ErrInvalidValue, []string{"Fill float32", "nil device"}},
		{"nil stream", testhook.Spin(e.dev, nil, time.Millisecond),
			backend.ErrInvalidValue, []string{"Spin", "nil"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			assert.ErrorIs(t, c.err, c.is)
			for _, s := range c.contains {
				assert.Contains(t, c.err.Error(), s)
			}
		})
	}

	t.Run("reductions", func(t *testing.T) {
		_, err := kernels.Max[complex64](e.dev, e.s, d.p, 2)
		assert.ErrorIs(t, err, kernels.ErrUnsupportedDType)
		assert.ErrorContains(t, err, "Max does not take complex64")
		_, err = kernels.Dot[int32](e.dev, e.s, x.p, x.p, 2)
		assert.ErrorIs(t, err, kernels.ErrUnsupportedDType)
		_, err = kernels.SumInt64[float32](e.dev, e.s, x.p, 2)
		assert.ErrorContains(t, err, "it takes int32, int64, uint8")
		_, err = kernels.Sum[float32](e.dev, e.s, x.p, -3)
		assert.ErrorIs(t, err, backend.ErrInvalidValue)
		_, err = kernels.Dot[float32](e.dev, e.s, x.p, 0, 2)
		assert.ErrorContains(t, err, "pointer y is nil")
	})

	t.Run("n=0 queues nothing and takes nil pointers", func(t *testing.T) {
		require.NoError(t, kernels.Add[float32](e.dev, e.s, 0, 0, 0, 0))
		require.NoError(t, kernels.Fill[int64](e.dev, e.s, 0, 7, 0))
		require.NoError(t, testhook.Spin(e.dev, e.s, 0))
	})
}

// otherDevice is a backend.Device of no backend the kernels know.
type otherDevice struct{ backend.Device }

func TestUnknownBackend(t *testing.T) {
	e := newEnv(t)
	err := kernels.Fill[float32](otherDevice{e.dev}, e.s, 64, 1, 1)
	require.ErrorIs(t, err, backend.ErrNotSupported)
	assert.ErrorContains(t, err, "kernels_test.otherDevice")
}

func TestStreamOfAnotherDevice(t *testing.T) {
	e := newEnv(t)
	other := host.New(host.Options{Devices: 2})
	d1, err := other.Device(1)
	require.NoError(t, err)
	s1, err := d1.NewStream()
	require.NoError(t, err)
	defer s1.Destroy()
	x := alloc[float32](t, e, 4, false)
	err = kernels.Fill[float32](e.dev, s1, x.p, 1, 4)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.ErrorContains(t, err, "is not a stream of")
	if _, ok := e.dev.(*host.Device); !ok {
		return
	}
	// A destroyed host stream is an error, not a crash.
	s2, err := e.dev.NewStream()
	require.NoError(t, err)
	require.NoError(t, s2.Destroy())
	err = kernels.Fill[float32](e.dev, s2, x.p, 1, 4)
	require.Error(t, err)
	assert.True(t, errors.Is(err, backend.ErrInvalidValue), "%v", err)
}
