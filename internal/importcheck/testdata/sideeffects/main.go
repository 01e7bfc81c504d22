// Sideeffects reports what importing cuarray did to the process before
// main ran, and what using an array did after: the goroutines running,
// the expvar names published and which of a set of paths
// http.DefaultServeMux routes somewhere. It imports net/http and expvar
// itself, as a server would, so that anything gocuda registered on them
// shows; expvar's own "cmdline", "memstats" and /debug/vars are expected.
// TestImportingCuarrayHasNoSideEffects reads its JSON.
package main

import (
	"encoding/json"
	"expvar"
	"log"
	"net/http"
	"os"
	"runtime"
	"slices"

	"github.com/gocuda/gocuda/cuarray"
)

// Report is what the program prints, once after import and once after
// use.
type Report struct {
	Goroutines int               `json:"goroutines"`
	Expvars    []string          `json:"expvars"`
	Routes     map[string]string `json:"routes"` // probed path -> pattern that serves it ("" none)
}

// probes are paths where a handler of gocuda's could be mounted: the root
// catches any subtree registered at "/".
var probes = []string{"/", "/debug/vars", "/debug/gocuda", "/debug/gocuda/devmem", "/debug/pprof/", "/metrics", "/gocuda"}

func report() Report {
	r := Report{Goroutines: runtime.NumGoroutine(), Routes: map[string]string{}}
	expvar.Do(func(kv expvar.KeyValue) { r.Expvars = append(r.Expvars, kv.Key) })
	slices.Sort(r.Expvars)
	for _, p := range probes {
		req, err := http.NewRequest(http.MethodGet, "http://localhost"+p, nil)
		if err != nil {
			log.Fatal(err)
		}
		_, pattern := http.DefaultServeMux.Handler(req)
		r.Routes[p] = pattern
	}
	return r
}

func main() {
	imported := report()
	a, err := cuarray.FromSlice([]float32{1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := a.ToSlice(); err != nil {
		log.Fatal(err)
	}
	used := report()
	if err := json.NewEncoder(os.Stdout).Encode(map[string]Report{"imported": imported, "used": used}); err != nil {
		log.Fatal(err)
	}
}
