package auto

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/config"
)

var chosen struct {
	once sync.Once
	b    backend.Backend
	why  string
	err  error
}

// Default returns the backend chosen by the environment, once per process.
// The first call also warns, through slog, about each GOCUDA_ variable
// that is not a knob (config.WarnUnknownOnce): a misspelt knob would
// otherwise do nothing, silently.
func Default() (backend.Backend, error) {
	chosen.once.Do(func() {
		config.WarnUnknownOnce()
		cfg, err := config.FromEnv()
		if err != nil {
			chosen.err = err
			return
		}
		chosen.b, chosen.why, chosen.err = Choose(cfg.Backend)
	})
	return chosen.b, chosen.err
}

// Why says why Default chose what it chose (for doctor): for "auto" on a
// machine without a GPU, the reason the driver could not be used.
func Why() string {
	_, _ = Default()
	return chosen.why
}

// Choose opens the backend called name ("auto", "cuda" or "host") and says
// why it took it.
func Choose(name string) (backend.Backend, string, error) {
	switch name {
	case "host":
		return hostBackend(), "GOCUDA_BACKEND=host", nil
	case "cuda":
		b, err := cudabackend.Open()
		if err != nil {
			return nil, "", fmt.Errorf("GOCUDA_BACKEND=cuda, but the CUDA backend cannot be used: %w", err)
		}
		return b, "GOCUDA_BACKEND=cuda", nil
	case "auto", "":
		b, err := cudabackend.Open()
		if err == nil {
			return b, "a CUDA driver and GPU were found", nil
		}
		why := "no usable GPU, so the host backend: " + err.Error()
		if errors.Is(err, backend.ErrNoDevice) {
			why = "the CUDA driver sees no GPU, so the host backend"
		}
		return hostBackend(), why, nil
	}
	return nil, "", &config.Error{Var: config.EnvBackend, Value: name, Accepted: "auto, cuda, host"}
}

// HostDevices is how many devices the host backend offers: two, so that
// code written for several GPUs (cross-device copies, one stream per
// device) runs, and is tested, on a machine without any.
const HostDevices = 2

func hostBackend() backend.Backend { return host.New(host.Options{Devices: HostDevices}) }
