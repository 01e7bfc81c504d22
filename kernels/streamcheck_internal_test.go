package kernels

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
)

func TestWritesFollowsTheNamingRule(t *testing.T) {
	tests := []struct {
		op, name string
		want     bool
	}{
		{"Add", "dst", true},
		{"X", "dstGrad", true},
		{"SoftmaxCrossEntropy", "loss", true},
		{"SoftmaxCrossEntropy", "dx", true},
		{"Axpy", "y", true},
		{"Axpy", "x", false},
		{"Dot", "y", false},
		{"Add", "a", false},
		{"ReluGrad", "dy", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, writes(tt.op, tt.name), "%s %s", tt.op, tt.name)
	}
}

// TestCheckSpanDeclaresTheArgumentsOwnLength: an argument shorter or
// longer than n is declared with its own length, so the bytes after a
// short one are not claimed and a long one is claimed whole; arguments
// sharing a pointer (in place) each keep their own declaration.
func TestCheckSpanDeclaresTheArgumentsOwnLength(t *testing.T) {
	b := host.New(host.Options{StreamCheck: host.StreamCheckReport, StreamCheckLog: io.Discard}).(*host.Backend)
	dev, err := b.Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	p, err := dev.Alloc(4096)
	require.NoError(t, err)
	defer dev.Free(p)

	tg, err := prepare("Test", floatTypes, Float32, dev, s, 100, ptrArg{"dst", p}, ptrArg{"x", p + 1024})
	require.NoError(t, err)
	assert.Equal(t, []host.Access{{Ptr: p, Bytes: 400, Write: true}, {Ptr: p + 1024, Bytes: 400}}, tg.hs.acc)
	require.NoError(t, tg.checkSpan(ptrArg{"b", p + 2048}, 40))
	require.NoError(t, tg.checkSpan(ptrArg{"y", p}, 1600))
	assert.Equal(t, []host.Access{
		{Ptr: p, Bytes: 400, Write: true}, {Ptr: p + 1024, Bytes: 400},
		{Ptr: p + 2048, Bytes: 40}, {Ptr: p, Bytes: 1600},
	}, tg.hs.acc)
	require.ErrorIs(t, tg.checkSpan(ptrArg{"c", p + 2}, 40), backend.ErrInvalidValue, "checked as checkPtr checks")

	off := host.New(host.Options{StreamCheck: host.StreamCheckOff})
	dev2, _ := off.Device(0)
	s2, err := dev2.NewStream()
	require.NoError(t, err)
	defer s2.Destroy()
	tg, err = prepare("Test", floatTypes, Float32, dev2, s2, 100, ptrArg{"dst", p})
	require.NoError(t, err)
	assert.Nil(t, tg.hs.acc, "nothing is collected with the checker off")
}
