// Package expvarmetrics publishes gocuda's pool figures in expvar, where
// net/http's /debug/vars serves them as JSON. Nothing is published until
// the program calls Publish (the process's device pools, under "gocuda")
// or PublishMetrics (an observe.Metrics of its own):
//
//	if err := expvarmetrics.Publish(); err != nil { ... }
//	go http.ListenAndServe("localhost:6060", nil) // GET /debug/vars
//
// It is a package of its own because importing expvar registers
// /debug/vars on http.DefaultServeMux and links net/http: a program that
// only computes on arrays should get neither.
package expvarmetrics
