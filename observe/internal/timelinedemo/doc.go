// Timelinedemo makes the timeline picture and the /debug/vars output of
// docs/observability.md: a loop that allocates like a training step does
// (fresh 4 MiB arrays, a few kept, the rest left to the collector) under
// a timeline, then the figures expvar serves, fetched over HTTP.
//
//	GOCUDA_HARD_MEMORY_LIMIT=64MiB GOCUDA_DEBUG=log go run ./observe/internal/timelinedemo docs/img/timeline.svg
package main
