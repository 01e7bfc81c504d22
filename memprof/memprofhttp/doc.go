// Package memprofhttp serves memprof's device-memory profile over HTTP, in
// the manner of net/http/pprof's heap handler: "go tool pprof" reads it
// from wherever the program mounts Handler, and "?debug=1" returns
// memprof.WriteReport's text instead.
//
//	http.Handle("/debug/gocuda/devmem", memprofhttp.Handler())
//
// It is a package of its own so that only programs that serve the profile
// link net/http; importing it mounts nothing.
package memprofhttp
