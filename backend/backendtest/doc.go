// Package backendtest is a conformance suite for implementations of
// backend.Backend. It uses nothing but the backend interfaces, so the same
// tests run on the host backend in CI and on the CUDA backend on a GPU:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, host.New(host.Options{}))
//	}
//
// The stream tests are built to fail if ordering breaks: work that must run
// later reads memory that earlier, slow work writes last.
package backendtest
