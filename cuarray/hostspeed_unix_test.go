//go:build unix

package cuarray_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user and system, every
// thread): what the host comparisons time, so that other processes on a
// loaded machine do not stretch one side of a ratio.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
