// Package trace reads recorded device-allocation traces and replays them
// through a pool, so that pools can be compared on real workloads: how much
// memory each reserves for the same live bytes, and how fast it serves the
// requests.
//
// A trace is text, usually gzip-compressed, one event a line:
//
//	# workload gpt2_train; torch 2.11.0+cu130; NVIDIA H100 80GB HBM3
//	# torch_peak_allocated 7722708480 torch_peak_reserved 8082423808 allocs 17643 frees 17640 streams 1
//	a <id> <bytes> <stream>   allocate <bytes> (as requested) on trace stream <stream>
//	f <id>                    free allocation <id>
//
// Lines starting with # are comments; the ones before the first event are
// the header, whose "key value" pairs are kept in Trace.Meta and whose
// torch_peak_allocated and torch_peak_reserved (PyTorch's own figures for
// the recorded run) are kept as numbers for comparison.
//
// Parsing turns the text into a slice of 16-byte events with dense
// allocation slots and stream indices, so that Replay is a tight loop over
// a slice with no maps and no parsing.
package trace
