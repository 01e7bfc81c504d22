package memprofhttp_test

import (
	"net/http"

	"github.com/gocuda/gocuda/memprof/memprofhttp"
)

// Mount the profile next to net/http/pprof's and read it with
// "go tool pprof http://localhost:6060/debug/gocuda/devmem".
func ExampleHandler() {
	http.Handle("/debug/gocuda/devmem", memprofhttp.Handler())
	// go http.ListenAndServe("localhost:6060", nil)
}
