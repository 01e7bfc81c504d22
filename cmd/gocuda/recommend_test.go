package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRecommendLowestReservedPerLiveTiesToTheFaster(t *testing.T) {
	res := func(pool string, ratio, speed float64) poolResult {
		return poolResult{Pool: pool, Events: 10, ReservedPerLive: ratio, EventsPerSec: speed}
	}
	tests := []struct {
		name    string
		results []poolResult
		want    string   // "" for no recommendation
		says    []string // in the reason
	}{
		{"lowest ratio wins", []poolResult{res("split", 1.30, 5e6), res("binned", 1.10, 2e6)}, "binned",
			[]string{"GOCUDA_MEMORY_POOL=binned", "1.100 times", "the lowest of 2 pools", "2.00 M events/s", "split is faster (5.00 M events/s) but reserves 1.300"}},
		{"near tie goes to the faster", []poolResult{res("none", 1.000, 0.1e6), res("binned", 1.005, 4e6)}, "binned",
			[]string{"1.005 times", "4.00 M events/s", "within 2% of the lowest, 1.000"}},
		{"failed, skipped and out-of-memory replays are not chosen", []poolResult{
			{Pool: "none", Events: 10, ReservedPerLive: 1, EventsPerSec: 9e6, OOMs: 1},
			{Pool: "cuda", Skipped: "needs the CUDA backend"},
			{Pool: "simple", Events: 3, Error: "boom", ReservedPerLive: 1, EventsPerSec: 9e6},
			res("split", 1.5, 1e6)}, "split", []string{"1.500 times"}},
		{"nothing finished", []poolResult{{Pool: "cuda", Skipped: "x"}}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := traceReport{Events: 10, Results: tt.results}
			recommend(&tr)
			assert.Equal(t, tt.want, tr.Recommended)
			if tt.want == "" {
				assert.Empty(t, tr.Recommendation)
			}
			for _, s := range tt.says {
				assert.Contains(t, tr.Recommendation, s)
			}
		})
	}
}
