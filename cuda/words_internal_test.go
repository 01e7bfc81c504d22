package cuda

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Launch sends up to MaxWords arguments as words: the bytes a kernel
// reads at each word must be those the packed path gives it.
func TestWordArgsHoldWhatPackedArgumentsHold(t *testing.T) {
	args := []any{DevicePtr(0xdead_beef_0000), uintptr(7), uint64(math.MaxUint64), int64(-3), int(-1 << 40),
		-2.5, int32(-16), uint32(0x8000_0001), float32(1.5)}
	var w [MaxWords]uint64
	require.True(t, toWordArgs(&w, args))
	buf, offs, err := packArgs(nil, nil, args)
	require.NoError(t, err)
	require.Len(t, offs, len(args))
	for i := range args {
		end := len(buf)
		if i+1 < len(offs) {
			end = int(offs[i+1])
		}
		size := min(end-int(offs[i]), 8)
		if _, small := args[i].(int32); small {
			size = 4
		}
		word := unsafe.Slice((*byte)(unsafe.Pointer(&w[i])), 8)
		assert.Equal(t, buf[offs[i]:int(offs[i])+size], word[:size], "argument %d (%T)", i, args[i])
	}
}

func TestWordArgsRefuseWhatLaunchRefuses(t *testing.T) {
	var w [MaxWords]uint64
	assert.False(t, toWordArgs(&w, []any{DevicePtr(1), "not an argument"}))
	assert.False(t, toWordArgs(&w, []any{int16(1)}))
	_, _, err := packArgs(nil, nil, []any{int16(1)})
	assert.ErrorContains(t, err, "accepted are")
}
