package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDistanceCountsSwapsAsOneStep(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"status", "status", 0}, {"stauts", "status", 1}, {"statu", "status", 1},
		{"sttus", "status", 1}, {"bench", "doctor", 6}, {"", "abc", 3},
		{"GOCUDA_MEMROY_POOL", "GOCUDA_MEMORY_POOL", 1},
	} {
		assert.Equal(t, tc.want, Distance(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.want, Distance(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
}

func TestNearestPicksTheClosestOrNone(t *testing.T) {
	words := []string{"status", "doctor", "bench", "replay"}
	for _, tc := range []struct{ typed, want string }{
		{"stauts", "status"},
		{"docter", "doctor"},
		{"rep", "replay"}, // a prefix, though three letters short
		{"xyzzy", ""},
		{"", ""},
		{"benchmarks", ""}, // five letters more: too far
	} {
		assert.Equal(t, tc.want, Nearest(tc.typed, words), "%q", tc.typed)
	}
}

func TestNearestBreaksTiesBySortedOrder(t *testing.T) {
	assert.Equal(t, "abcdeg", Nearest("abcdef", []string{"abcdeh", "abcdeg"}))
	assert.Equal(t, "abcdeg", Nearest("abcdef", []string{"abcdeg", "abcdeh"}))
}
