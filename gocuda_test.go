package gocuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
)

func TestPoolIsOnePerDeviceOfTheConfiguredStrategy(t *testing.T) {
	c, err := Config()
	require.NoError(t, err)
	p, err := Pool(0)
	require.NoError(t, err)
	assert.Equal(t, c.Pool, p.Name())
	again, err := Pool(0)
	require.NoError(t, err)
	assert.Same(t, p, again)
	_, err = Pool(1 << 10)
	assert.Error(t, err)
}

func TestLimitsForResolvesSharesAgainstDeviceMemory(t *testing.T) {
	dev, err := Device(0)
	require.NoError(t, err)
	c, err := config.Parse(func(k string) (string, bool) {
		return map[string]string{config.EnvSoftLimit: "50%", config.EnvHardLimit: "1GiB"}[k], k == config.EnvSoftLimit || k == config.EnvHardLimit
	})
	require.NoError(t, err)
	l := LimitsFor(c, dev)
	assert.Equal(t, dev.Info().TotalMemory/2, l.Soft)
	assert.Equal(t, uint64(1<<30), l.Hard)
}
