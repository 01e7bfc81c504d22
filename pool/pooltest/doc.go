// Package pooltest is the conformance suite every pool strategy's tests
// run: the rules of package pool (alignment, errors, statistics, limits,
// reclaiming, stream ordering, concurrency) checked against a real device,
// a reference-model fuzz target, and the shared benchmarks.
//
// A strategy's test file needs a few lines:
//
//	func TestConformance(t *testing.T) { pooltest.Run(t, "simple", simple.New) }
//	func FuzzPool(f *testing.F)        { pooltest.Fuzz(f, simple.New) }
//	func BenchmarkAllocFree(b *testing.B) { pooltest.BenchAllocFree(b, simple.New) }
//	func BenchmarkParallel(b *testing.B)  { pooltest.BenchParallel(b, simple.New) }
//
// Strategies that cannot give back every reserved byte in every state
// (segments shared by several blocks, a driver pool keeping a floor) say
// so with a Suite instead of Run:
//
//	pooltest.Suite{Name: "split", New: split.New, Fragments: true}.Run(t)
//
// The device comes from Device, the one place that picks the backend the
// tests run on, so the same tests run on the host backend in CI and on a
// GPU on a lent machine.
package pooltest
