package pool_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

func TestOutOfMemoryErrorText(t *testing.T) {
	const miB = 1 << 20
	for _, tc := range []struct {
		name string
		e    pool.OutOfMemoryError
		want string
	}{
		{"rounded to a block under a limit",
			pool.OutOfMemoryError{Request: 3 * miB, Rounded: 4 * miB, Limit: 64 * miB, Reserved: 61 * miB},
			"out of device memory on device 0: cannot allocate 3.0 MiB (3145728 bytes) as a 4.0 MiB block with 61 MiB reserved under a hard limit of 64 MiB (3.0 MiB left)"},
		{"a new segment",
			pool.OutOfMemoryError{Request: 512, Rounded: 2 * miB, RoundedTo: "segment", Limit: 2 * miB, Reserved: miB, Device: 1},
			"out of device memory on device 1: cannot allocate 512 B (512 bytes) from a new 2.0 MiB segment with 1.0 MiB reserved under a hard limit of 2.0 MiB (1.0 MiB left)"},
		{"mapping",
			pool.OutOfMemoryError{Request: miB, Rounded: 2 * miB, RoundedTo: "mapping"},
			"out of device memory on device 0: cannot allocate 1.0 MiB (1048576 bytes) by mapping 2.0 MiB more with 0 B reserved"},
		{"no rounding, no limit, the driver refused",
			pool.OutOfMemoryError{Request: miB, Rounded: miB, Reserved: 8 * miB, Err: errors.New("device full")},
			"out of device memory on device 0: cannot allocate 1.0 MiB (1048576 bytes) with 8.0 MiB reserved: device full"},
		{"reserved past a limit set later: no room to state",
			pool.OutOfMemoryError{Request: miB, Limit: miB, Reserved: 2 * miB},
			"out of device memory on device 0: cannot allocate 1.0 MiB (1048576 bytes) with 2.0 MiB reserved under a hard limit of 1.0 MiB"},
		{"status on its own lines",
			pool.OutOfMemoryError{Request: miB, Status: "Device 0: ..."},
			"out of device memory on device 0: cannot allocate 1.0 MiB (1048576 bytes) with 0 B reserved\nDevice 0: ..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.e.Error())
			assert.ErrorIs(t, &tc.e, backend.ErrOutOfMemory)
		})
	}
}
