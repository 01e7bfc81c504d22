package kernels

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestSpanReplacesTheDeclaredLength: an argument shorter than n is given
// its own length, so the bytes after it are not claimed.
func TestSpanReplacesTheDeclaredLength(t *testing.T) {
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
	tg.span("dst", p, 40)
	assert.Equal(t, []host.Access{{Ptr: p + 1024, Bytes: 400}, {Ptr: p, Bytes: 40, Write: true}}, tg.hs.acc)

	off := host.New(host.Options{StreamCheck: host.StreamCheckOff})
	dev2, _ := off.Device(0)
	s2, err := dev2.NewStream()
	require.NoError(t, err)
	defer s2.Destroy()
	tg, err = prepare("Test", floatTypes, Float32, dev2, s2, 100, ptrArg{"dst", p})
	require.NoError(t, err)
	assert.Nil(t, tg.hs.acc, "nothing is collected with the checker off")
}
