// Package recorder writes the allocation trace that GOCUDA_TRACE asks for:
// every allocation and free of the process's device pools, with their
// streams, in the text format internal/trace parses and gocuda replay
// reads (see internal/trace's package comment).
//
// The root package wraps each device pool with Wrap only when
// GOCUDA_TRACE is set, so a program that does not record pays nothing.
package recorder
