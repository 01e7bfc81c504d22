package memprofhttp

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gocuda/gocuda/memprof"
)

// Handler serves the device-memory profile, in the manner of
// net/http/pprof's heap handler: mount it where you like,
//
//	http.Handle("/debug/gocuda/devmem", memprofhttp.Handler())
//
// then "go tool pprof http://HOST/debug/gocuda/devmem" reads it, and
// "?debug=1" returns memprof.WriteReport's text instead. It is never mounted for
// you: a profile shows your program's source paths, so exposing it is the
// program's choice.
//
// When tracing is off and nothing traced is live it answers 503 with how
// to turn tracing on, rather than an empty profile that looks like "no
// memory in use".
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	debug := 0
	if v := r.FormValue("debug"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, fmt.Sprintf("memprofhttp: debug=%q: accepted values are 0 (pprof profile) and 1 (text report)", v), http.StatusBadRequest)
			return
		}
		debug = n
	}
	if !memprof.Enabled() && !anyLive() {
		http.Error(w, "memprofhttp: leak tracing is off: start the program with GOCUDA_DEBUG=leaks or call memprof.Enable()", http.StatusServiceUnavailable)
		return
	}
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = memprof.WriteReport(w, memprof.ReportOptions{})
		return
	}
	p := memprof.Profile()
	if err := p.CheckValid(); err != nil {
		http.Error(w, "memprofhttp: built an invalid profile: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="devmem"`)
	// An error here is the client going away after the status line was
	// sent: there is no one left to tell.
	_ = p.Write(w)
}

// anyLive reports whether any wrapped pool holds a traced live buffer.
// It reads every site, which costs more than memprof's own count would,
// but only when a request arrives with tracing off.
func anyLive() bool {
	for _, st := range memprof.Sites() {
		if st.Live > 0 {
			return true
		}
	}
	return false
}
