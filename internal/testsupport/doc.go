// Package testsupport holds nothing itself: its subpackages are the
// scaffolding gocuda's own tests share across package boundaries — the
// schoolbook BLAS reference (blasref), a test's own pool and stream for
// array tests (arraytest), finding a GPU or skipping
// (drivertest), and the hooks tests reach inside the backends (testhook).
// They sit apart from internal/'s runtime helpers (libload, devstream,
// elemexpr, recorder, ...), which the library itself runs on, and from
// examples/internal, which only the examples use. Nothing outside the
// module can import them.
package testsupport
