//go:build race

package trace_test

// raceEnabled lowers timing floors under the race detector.
const raceEnabled = true
