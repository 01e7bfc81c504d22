// Package importcheck keeps gocuda cheap to import. Its tests fail when a
// program that imports only cuarray links more packages or builds to a
// larger binary than docs/imports.md's budget, when a core package (cuda,
// backend, pool, gcpressure, cuarray, kernels, blas) comes to import
// presentation (net/http, expvar, gonum/plot), and when importing cuarray
// starts a goroutine, publishes an expvar or mounts an HTTP handler.
//
// The tests run the go command on the programs in testdata, so they skip
// where there is no Go toolchain (the GPU machines); the ones that build
// a program also skip under -short.
package importcheck
