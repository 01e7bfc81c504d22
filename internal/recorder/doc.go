// Package recorder writes the allocation trace that GOCUDA_TRACE asks for:
// every allocation and free of the process's device pools, with their
// streams, in the text format internal/trace parses and gocuda replay
// reads (see internal/trace's package comment).
//
// The root package wraps each device pool with Wrap only when
// GOCUDA_TRACE is set, so a program that does not record pays nothing.
//
// Events reach the file while the program runs: an allocation appends
// its line to an in-memory chunk, and a writer goroutine writes full
// chunks as they come and the rest every FlushPeriod, flushing the file
// (and the gzip stream's block) each time. A program that exits or
// crashes without Close leaves a file that reads up to the last flush;
// Close adds the last events and an end line. The text held in memory is
// bounded (MaxQueued); when the writer falls that far behind, events wait
// for it rather than being dropped.
package recorder
