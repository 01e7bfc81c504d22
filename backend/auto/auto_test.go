package auto_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/backendtest"
	"github.com/gocuda/gocuda/config"
)

// TestDefaultBackendConforms runs the backend conformance suite on whatever
// the environment selects: the host here, the GPU with GOCUDA_BACKEND=cuda.
func TestDefaultBackendConforms(t *testing.T) {
	b, err := auto.Default()
	require.NoError(t, err)
	if want := os.Getenv(config.EnvBackend); want == "cuda" || want == "host" {
		require.Equal(t, want, b.Name(), "GOCUDA_BACKEND=%s must be honoured", want)
	}
	t.Logf("backend %s: %s", b.Name(), auto.Why())
	backendtest.Run(t, b)
}

func TestChooseRejectsUnknownBackendNamingTheChoices(t *testing.T) {
	_, _, err := auto.Choose("gpu")
	require.Error(t, err)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, config.EnvBackend, ce.Var)
	assert.Contains(t, err.Error(), `"gpu"`)
	assert.Contains(t, err.Error(), "auto, cuda, host")
}

func TestChooseHostAlwaysWorks(t *testing.T) {
	b, why, err := auto.Choose("host")
	require.NoError(t, err)
	assert.Equal(t, "host", b.Name())
	assert.NotEmpty(t, why)
}

func TestChooseCUDAFailsClearlyWithoutAGPU(t *testing.T) {
	b, _, err := auto.Choose("cuda")
	if err == nil {
		assert.Equal(t, "cuda", b.Name())
		return
	}
	assert.Contains(t, err.Error(), "GOCUDA_BACKEND=cuda")
}
