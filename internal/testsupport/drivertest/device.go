package drivertest

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/config"
)

// GPU returns device 0 of the CUDA backend. Without a usable GPU the test
// is skipped, saying why, except under GOCUDA_BACKEND=cuda, where a GPU
// is expected and its absence fails the test.
func GPU(t testing.TB) *cudabackend.Device {
	t.Helper()
	b, err := cudabackend.Open()
	if err == nil {
		var d any
		if d, err = b.Device(0); err == nil {
			return d.(*cudabackend.Device)
		}
	}
	if os.Getenv(config.EnvBackend) == "cuda" {
		t.Fatalf("GOCUDA_BACKEND=cuda but the CUDA backend cannot be used: %v", err)
	}
	t.Skipf("no GPU: %v", err)
	return nil
}
