package main

import "testing"

// The example runs to the end on this machine's backend (main exits the
// test binary with a failure on any error).
func TestExampleRuns(t *testing.T) { main() }
