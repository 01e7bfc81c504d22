package hostpar_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gocuda/gocuda/internal/hostpar"
)

func TestSplitCoversEveryElementOnceOnAGoroutineAGrainAtMost(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct {
		name       string
		n, grain   int
		wantPieces int
	}{
		{"empty", 0, 16, 1},
		{"below one grain", 10, 16, 1},
		{"two grains", 32, 16, 2},
		{"more grains than workers", 1000, 16, 4},
		{"a ragged end", 33, 16, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := make([]int, tc.n)
			var mu sync.Mutex
			pieces := 0
			hostpar.Split(tc.n, tc.grain, func(lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				pieces++
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			assert.Equal(t, tc.wantPieces, pieces)
			for i, c := range seen {
				assert.Equal(t, 1, c, "element %d", i)
			}
		})
	}
}
