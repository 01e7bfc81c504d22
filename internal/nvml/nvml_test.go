package nvml_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/nvml"
)

func TestMIGModeReadsEveryGPUOrSaysWhyNot(t *testing.T) {
	if err := cuda.Init(); err != nil {
		_, err := nvml.MIGMode("0000:00:00.0")
		require.Error(t, err, "no CUDA driver, yet NVML answered")
		assert.Contains(t, err.Error(), "nvml: ")
		return
	}
	n, err := cuda.DeviceCount()
	require.NoError(t, err)
	for i := range n {
		d, err := cuda.GetDevice(i)
		require.NoError(t, err)
		bus, err := d.PCIBusID()
		require.NoError(t, err)
		m, err := nvml.MIGMode(bus)
		require.NoError(t, err, "device %d at %s", i, bus)
		if !m.Supported {
			assert.False(t, m.Current || m.Pending, "a GPU without MIG has it neither on nor pending")
		}
		t.Logf("device %d at %s: %+v", i, bus, m)
	}
}

func TestMIGModeOfAnAbsentBusIsAnErrorNamingIt(t *testing.T) {
	if err := cuda.Init(); err != nil {
		t.Skip("no driver, so no NVML:", err)
	}
	_, err := nvml.MIGMode("0000:FE:1F.7")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "0000:FE:1F.7")
}
