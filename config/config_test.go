package config

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseDefaultsWhenNothingIsSet(t *testing.T) {
	c, err := Parse(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "auto", c.Backend)
	assert.Equal(t, DefaultPool, c.Pool)
	assert.True(t, c.GCEarly)
	assert.False(t, c.SoftLimit.Set())
	assert.False(t, c.HardLimit.Set())
	assert.Empty(t, c.Set)
}

func TestParseAcceptsEveryDocumentedForm(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"backend cuda", map[string]string{EnvBackend: "cuda"}, func(t *testing.T, c Config) { assert.Equal(t, "cuda", c.Backend) }},
		{"backend upper case", map[string]string{EnvBackend: "HOST"}, func(t *testing.T, c Config) { assert.Equal(t, "host", c.Backend) }},
		{"pool split", map[string]string{EnvPool: "split"}, func(t *testing.T, c Config) { assert.Equal(t, "split", c.Pool) }},
		{"empty pool means default", map[string]string{EnvPool: " "}, func(t *testing.T, c Config) { assert.Equal(t, DefaultPool, c.Pool) }},
		{"hard limit GiB", map[string]string{EnvHardLimit: "4GiB"}, func(t *testing.T, c Config) { assert.Equal(t, uint64(4<<30), c.HardLimit.Bytes) }},
		{"soft limit decimal GB", map[string]string{EnvSoftLimit: "12.5GB"}, func(t *testing.T, c Config) { assert.Equal(t, uint64(12_500_000_000), c.SoftLimit.Bytes) }},
		{"hard limit percent", map[string]string{EnvHardLimit: "80%"}, func(t *testing.T, c Config) {
			assert.Equal(t, 80.0, c.HardLimit.Percent)
			assert.Equal(t, uint64(800), c.HardLimit.Resolve(1000))
		}},
		{"plain bytes", map[string]string{EnvHardLimit: "1048576"}, func(t *testing.T, c Config) { assert.Equal(t, uint64(1<<20), c.HardLimit.Bytes) }},
		{"none", map[string]string{EnvHardLimit: "none"}, func(t *testing.T, c Config) { assert.False(t, c.HardLimit.Set()) }},
		{"gc early off", map[string]string{EnvGCEarly: "false"}, func(t *testing.T, c Config) { assert.False(t, c.GCEarly) }},
		{"gc early 1", map[string]string{EnvGCEarly: "1"}, func(t *testing.T, c Config) { assert.True(t, c.GCEarly) }},
		{"debug leaks", map[string]string{EnvDebug: "leaks"}, func(t *testing.T, c Config) { assert.True(t, c.Debug["leaks"]) }},
		{"idle trim duration", map[string]string{EnvIdleTrim: "30s"}, func(t *testing.T, c Config) { assert.Equal(t, 30*time.Second, c.IdleTrim) }},
		{"idle trim off", map[string]string{EnvIdleTrim: "off"}, func(t *testing.T, c Config) { assert.Zero(t, c.IdleTrim) }},
		{"idle trim 0", map[string]string{EnvIdleTrim: "0"}, func(t *testing.T, c Config) { assert.Zero(t, c.IdleTrim) }},
		{"soft below hard", map[string]string{EnvSoftLimit: "1GiB", EnvHardLimit: "2GiB"}, func(t *testing.T, c Config) {
			assert.Equal(t, uint64(1<<30), c.SoftLimit.Bytes)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(env(tt.env))
			require.NoError(t, err)
			tt.check(t, c)
			for k, v := range tt.env {
				assert.Equal(t, v, c.Set[k], "raw value kept for doctor")
			}
		})
	}
}

func TestParseRejectsBadValuesNamingVariableValueAndForms(t *testing.T) {
	tests := []struct {
		name, variable, value, accepted string
	}{
		{"unknown backend", EnvBackend, "gpu", "auto, cuda, host"},
		{"misspelt pool", EnvPool, "bined", "cuda, binned, split, simple, none"},
		{"negative limit", EnvHardLimit, "-4GiB", "80%"},
		{"percent over 100", EnvHardLimit, "120%", "80%"},
		{"zero percent", EnvSoftLimit, "0%", "80%"},
		{"fraction of a byte", EnvHardLimit, "1.5", "4GiB"},
		{"unknown unit", EnvHardLimit, "4 parsecs", "4GiB"},
		{"not a bool", EnvGCEarly, "maybe", "true, false"},
		{"unknown debug flag", EnvDebug, "leaks,everything", "leaks"},
		{"idle trim without unit", EnvIdleTrim, "30", "30s, 5m"},
		{"idle trim too short", EnvIdleTrim, "1ms", "at least 10ms"},
		{"idle trim negative", EnvIdleTrim, "-5s", "or off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(env(map[string]string{tt.variable: tt.value}))
			require.Error(t, err)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.variable, e.Var)
			assert.Equal(t, tt.variable, c.Invalid)
			assert.Contains(t, err.Error(), tt.variable)
			assert.Contains(t, err.Error(), tt.value)
			assert.Contains(t, err.Error(), tt.accepted)
		})
	}
}

func TestParseRejectsSoftLimitAboveHardLimit(t *testing.T) {
	_, err := Parse(env(map[string]string{EnvSoftLimit: "8GiB", EnvHardLimit: "4GiB"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvHardLimit)
}

func TestUnknownSetFindsMisspeltKnobs(t *testing.T) {
	got := UnknownSet([]string{"GOCUDA_MEMORY_POL=binned", "GOCUDA_BACKEND=host", "PATH=/bin", "GOCUDA_TEST_X=1"})
	assert.Equal(t, []string{"GOCUDA_MEMORY_POL"}, got)
}

func TestLimitString(t *testing.T) {
	assert.Equal(t, "none", Limit{}.String())
	assert.Equal(t, "80%", Limit{Percent: 80}.String())
	assert.Equal(t, "4.0 GiB", Limit{Bytes: 4 << 30}.String())
}

// FuzzParseLimit: any input either fails cleanly or yields a limit whose
// resolved value never exceeds the device for shares, and never panics.
func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"4GiB", "12.5GB", "80%", "100%", "0", "none", "1048576", "-1", "1e9", "%", "99999999999999999999", "1.5", "5 MiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLimit(s)
		if err != nil {
			return
		}
		if l.Percent > 0 {
			require.LessOrEqual(t, l.Percent, 100.0)
			require.LessOrEqual(t, l.Resolve(1<<40), uint64(1<<40))
		}
		require.LessOrEqual(t, l.Bytes, uint64(math.MaxInt64))
	})
}
