package memprof

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGoidTellsGoroutinesApart(t *testing.T) {
	here := goid()
	assert.NotZero(t, here)
	assert.Equal(t, here, goid())
	var other uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); other = goid() }()
	wg.Wait()
	assert.NotZero(t, other)
	assert.NotEqual(t, here, other)
}

func TestInsideMeasuredSeesOnlyTheMeasuredExtent(t *testing.T) {
	assert.NotZero(t, measuredPC)
	assert.False(t, insideMeasured())
	var in, deep, child bool
	runMeasured(func() {
		in = insideMeasured()
		deep = recurse(200) // deeper than one Callers buffer
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); child = insideMeasured() }()
		wg.Wait()
	})
	assert.True(t, in)
	assert.True(t, deep)
	assert.False(t, child, "a goroutine started inside f is not inside f")
}

func recurse(n int) bool {
	if n == 0 {
		return insideMeasured()
	}
	return recurse(n - 1)
}

// The costs behind Allocated's and tracing's documented overheads.
func BenchmarkGoid(b *testing.B) {
	for b.Loop() {
		goid()
	}
}

func BenchmarkCallers(b *testing.B) {
	var k stackKey
	for b.Loop() {
		runtimeCallers(&k)
	}
}

//go:noinline
func runtimeCallers(k *stackKey) int { return runtime.Callers(3, k[:]) }
