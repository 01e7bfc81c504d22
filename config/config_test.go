package config

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
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
	assert.Equal(t, DefaultGCPercent, c.GCPercent)
	assert.False(t, c.SoftLimit.Set())
	assert.False(t, c.HardLimit.Set())
	assert.Empty(t, c.Set)
	assert.Equal(t, DefaultKernelCache(), c.KernelCache)
	assert.Empty(t, c.NVRTCLibrary)
	assert.Equal(t, 2*time.Minute, c.RendezvousTimeout)
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
		{"hard limit off", map[string]string{EnvHardLimit: "off"}, func(t *testing.T, c Config) { assert.False(t, c.HardLimit.Set()) }},
		{"soft limit OFF", map[string]string{EnvSoftLimit: "OFF"}, func(t *testing.T, c Config) { assert.False(t, c.SoftLimit.Set()) }},
		{"pool off is none", map[string]string{EnvPool: "off"}, func(t *testing.T, c Config) { assert.Equal(t, "none", c.Pool) }},
		{"pool none", map[string]string{EnvPool: "none"}, func(t *testing.T, c Config) { assert.Equal(t, "none", c.Pool) }},
		{"empty hard limit is unset", map[string]string{EnvHardLimit: ""}, func(t *testing.T, c Config) { assert.False(t, c.HardLimit.Set()) }},
		{"blank soft limit is unset", map[string]string{EnvSoftLimit: "  "}, func(t *testing.T, c Config) { assert.False(t, c.SoftLimit.Set()) }},
		{"empty backend is auto", map[string]string{EnvBackend: ""}, func(t *testing.T, c Config) { assert.Equal(t, "auto", c.Backend) }},
		{"empty gc early is on", map[string]string{EnvGCEarly: ""}, func(t *testing.T, c Config) { assert.True(t, c.GCEarly) }},
		{"idle trim none", map[string]string{EnvIdleTrim: "none"}, func(t *testing.T, c Config) { assert.Zero(t, c.IdleTrim) }},
		{"rendezvous timeout", map[string]string{EnvRendezvousTimeout: " 90s "}, func(t *testing.T, c Config) { assert.Equal(t, 90*time.Second, c.RendezvousTimeout) }},
		{"rendezvous timeout empty is the default", map[string]string{EnvRendezvousTimeout: ""}, func(t *testing.T, c Config) {
			assert.Equal(t, DefaultRendezvousTimeout, c.RendezvousTimeout)
		}},
		{"soft share and hard bytes wait for a device", map[string]string{EnvSoftLimit: "80%", EnvHardLimit: "1GiB"}, func(t *testing.T, c Config) {
			assert.Equal(t, 80.0, c.SoftLimit.Percent)
		}},
		{"gc early off", map[string]string{EnvGCEarly: "false"}, func(t *testing.T, c Config) { assert.False(t, c.GCEarly) }},
		{"gc percent", map[string]string{EnvGCPercent: "50"}, func(t *testing.T, c Config) { assert.Equal(t, 50, c.GCPercent) }},
		{"gc percent with spaces and a percent sign", map[string]string{EnvGCPercent: " 200% "}, func(t *testing.T, c Config) { assert.Equal(t, 200, c.GCPercent) }},
		{"gc percent off", map[string]string{EnvGCPercent: "OFF"}, func(t *testing.T, c Config) { assert.Equal(t, GCPercentOff, c.GCPercent) }},
		{"gc percent largest", map[string]string{EnvGCPercent: "10000"}, func(t *testing.T, c Config) { assert.Equal(t, MaxGCPercent, c.GCPercent) }},
		{"empty gc percent is the default", map[string]string{EnvGCPercent: ""}, func(t *testing.T, c Config) { assert.Equal(t, DefaultGCPercent, c.GCPercent) }},
		{"gc early 1", map[string]string{EnvGCEarly: "1"}, func(t *testing.T, c Config) { assert.True(t, c.GCEarly) }},
		{"debug leaks", map[string]string{EnvDebug: "leaks"}, func(t *testing.T, c Config) { assert.True(t, c.Debug["leaks"]) }},
		{"idle trim duration", map[string]string{EnvIdleTrim: "30s"}, func(t *testing.T, c Config) { assert.Equal(t, 30*time.Second, c.IdleTrim) }},
		{"idle trim off", map[string]string{EnvIdleTrim: "off"}, func(t *testing.T, c Config) { assert.Zero(t, c.IdleTrim) }},
		{"idle trim 0", map[string]string{EnvIdleTrim: "0"}, func(t *testing.T, c Config) { assert.Zero(t, c.IdleTrim) }},
		{"trace file", map[string]string{EnvTrace: " run.trace.gz "}, func(t *testing.T, c Config) { assert.Equal(t, "run.trace.gz", c.Trace) }},
		{"nvrtc library", map[string]string{EnvNVRTCLibrary: "/opt/cuda/lib64/libnvrtc.so.13"}, func(t *testing.T, c Config) {
			assert.Equal(t, "/opt/cuda/lib64/libnvrtc.so.13", c.NVRTCLibrary)
		}},
		{"cublas library", map[string]string{EnvCUBLASLibrary: " /opt/cuda/lib64/libcublas.so.13 "}, func(t *testing.T, c Config) {
			assert.Equal(t, "/opt/cuda/lib64/libcublas.so.13", c.CUBLASLibrary)
		}},
		{"curand library", map[string]string{EnvCURANDLibrary: "/opt/cuda/lib64/libcurand.so.10"}, func(t *testing.T, c Config) {
			assert.Equal(t, "/opt/cuda/lib64/libcurand.so.10", c.CURANDLibrary)
		}},
		{"kernel cache folder", map[string]string{EnvKernelCache: "/var/cache/k/"}, func(t *testing.T, c Config) { assert.Equal(t, "/var/cache/k", c.KernelCache) }},
		{"kernel cache off", map[string]string{EnvKernelCache: "off"}, func(t *testing.T, c Config) { assert.Empty(t, c.KernelCache) }},
		{"kernel cache none", map[string]string{EnvKernelCache: "None"}, func(t *testing.T, c Config) { assert.Empty(t, c.KernelCache) }},
		{"trace empty is unset", map[string]string{EnvTrace: " "}, func(t *testing.T, c Config) { assert.Empty(t, c.Trace) }},
		{"nccl library", map[string]string{EnvNCCL: " /opt/nccl/lib/libnccl.so.2 "}, func(t *testing.T, c Config) {
			assert.Equal(t, "/opt/nccl/lib/libnccl.so.2", c.NCCLLibrary)
		}},
		{"nccl library empty searches", map[string]string{EnvNCCL: ""}, func(t *testing.T, c Config) { assert.Empty(t, c.NCCLLibrary) }},
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
		{"gc percent zero", EnvGCPercent, "0", `for no pacer write "off"`},
		{"gc percent negative", EnvGCPercent, "-1", "outside 1 to 10000"},
		{"gc percent too large", EnvGCPercent, "20000", "a whole number from 1 to 10000"},
		{"gc percent a fraction", EnvGCPercent, "1.5", "not a whole number"},
		{"gc percent a word", EnvGCPercent, "none", "or off for no pacer"},
		{"unknown debug flag", EnvDebug, "leaks,everything", "leaks"},
		{"idle trim without unit", EnvIdleTrim, "30", "30s, 5m"},
		{"idle trim too short", EnvIdleTrim, "1ms", "at least 10ms"},
		{"idle trim negative", EnvIdleTrim, "-5s", "or off"},
		{"rendezvous timeout off", EnvRendezvousTimeout, "off", "the wait cannot be unbounded"},
		{"rendezvous timeout 0", EnvRendezvousTimeout, "0", "give a duration such as 30m"},
		{"rendezvous timeout without unit", EnvRendezvousTimeout, "120", "a Go duration of at least 100ms (90s, 10m; 2m is the default)"},
		{"rendezvous timeout too short", EnvRendezvousTimeout, "1ms", "shorter than 100ms"},
		{"rendezvous timeout negative", EnvRendezvousTimeout, "-1m", "shorter than 100ms"},
		{"relative kernel cache", EnvKernelCache, "cache/k", "an absolute folder path, or off"},
		{"hard limit zero", EnvHardLimit, "0", `for no limit write "none" or "off"`},
		{"soft limit zero", EnvSoftLimit, "0", `for no limit write "none" or "off"`},
		{"hard limit zero with unit", EnvHardLimit, "0 MiB", `would refuse every allocation`},
		{"pool typo lists off", EnvPool, "of", "(off is none)"},
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

func TestParseRejectsSoftLimitAboveHardLimitNamingBoth(t *testing.T) {
	c, err := Parse(env(map[string]string{EnvSoftLimit: "8GiB", EnvHardLimit: "4 GiB"}))
	require.Error(t, err)
	assert.Equal(t, EnvSoftLimit, c.Invalid)
	assert.Equal(t, `GOCUDA_SOFT_MEMORY_LIMIT="8GiB" is not valid: accepted values are a limit no larger than GOCUDA_HARD_MEMORY_LIMIT="4 GiB"`, err.Error())
}

func TestResolveLimitsNamesBothVariablesTheirValuesAndWhatTheyCameTo(t *testing.T) {
	tests := []struct {
		name       string
		soft, hard string
		total      uint64
		wantSoft   uint64
		wantHard   uint64
		wantErr    string
	}{
		{"share under bytes", "50%", "1GiB", 1 << 30, 1 << 29, 1 << 30, ""},
		{"shares", "50%", "80%", 1000, 500, 800, ""},
		{"no hard limit", "80%", "none", 1000, 800, 0, ""},
		{"share above bytes", "80%", "1GiB", 89 << 30, 89 << 30 * 8 / 10, 1 << 30,
			`GOCUDA_SOFT_MEMORY_LIMIT="80%" is not valid: accepted values are a limit no larger than GOCUDA_HARD_MEMORY_LIMIT="1GiB" (on device 3, of 89 GiB, 80% is 71 GiB and 1GiB is 1.0 GiB)`},
		{"bytes above share", "2GiB", "10%", 10 << 30, 2 << 30, 1 << 30,
			`GOCUDA_SOFT_MEMORY_LIMIT="2GiB" is not valid: accepted values are a limit no larger than GOCUDA_HARD_MEMORY_LIMIT="10%" (on device 3, of 10 GiB, 2GiB is 2.0 GiB and 10% is 1.0 GiB)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(env(map[string]string{EnvSoftLimit: tt.soft, EnvHardLimit: tt.hard}))
			require.NoError(t, err, "shares are checked against a device, not at parse")
			soft, hard, err := c.ResolveLimits(tt.total, 3)
			assert.Equal(t, tt.wantSoft, soft)
			assert.Equal(t, tt.wantHard, hard)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, EnvSoftLimit, e.Var)
			assert.Equal(t, tt.wantErr, err.Error())
		})
	}
}

func TestNearestKnobCatchesTypos(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"GOCUDA_MEMROY_POOL", EnvPool},
		{"GOCUDA_GC_PERCNT", EnvGCPercent},
		{"GOCUDA_MEMORY_POL", EnvPool},
		{"GOCUDA_HARD_LIMIT", ""}, // too far from GOCUDA_HARD_MEMORY_LIMIT
		{"GOCUDA_HARD_MEMORY_LIMT", EnvHardLimit},
		{"GOCUDA_BAKCEND", EnvBackend},
		{"GOCUDA_IDLETRIM", EnvIdleTrim},
		{"GOCUDA_XYZ", ""},
		{"CUDA_VISIBLE_DEVICES", ""},
		{"GOCUDA_WORLDSIZE", EnvWorldSize},
		{"GOCUDA_LOCALRANK", EnvLocalRank},
	} {
		assert.Equal(t, tc.want, Nearest(tc.typed), tc.typed)
	}
}

func TestUnknownMessageSaysWhatToTypeInstead(t *testing.T) {
	assert.Equal(t, "GOCUDA_MEMROY_POOL is set but gocuda has no such knob, so it has no effect; did you mean GOCUDA_MEMORY_POOL?",
		UnknownMessage("GOCUDA_MEMROY_POOL"))
	assert.Equal(t, "GOCUDA_XYZ is set but gocuda has no such knob, so it has no effect; the knobs are "+strings.Join(Names(), ", "),
		UnknownMessage("GOCUDA_XYZ"))
}

func TestWarnUnknownLogsEachUnknownVariableAsAWarning(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	n := WarnUnknown(l, []string{"GOCUDA_MEMROY_POOL=binned", "GOCUDA_BACKEND=host", "GOCUDA_XYZ=1", "HOME=/", "GOCUDA_TEST_CHILD=1"})
	assert.Equal(t, 2, n)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `level=WARN msg="gocuda: GOCUDA_MEMROY_POOL is set but gocuda has no such knob, so it has no effect; did you mean GOCUDA_MEMORY_POOL?" variable=GOCUDA_MEMROY_POOL nearest=GOCUDA_MEMORY_POOL`)
	assert.Contains(t, lines[1], `variable=GOCUDA_XYZ nearest=""`)

	buf.Reset()
	assert.Zero(t, WarnUnknown(l, []string{"GOCUDA_BACKEND=host"}))
	assert.Empty(t, buf.String(), "nothing to say when every variable is a knob")
}

func TestUnknownSetFindsMisspeltKnobs(t *testing.T) {
	got := UnknownSet([]string{"GOCUDA_MEMORY_POL=binned", "GOCUDA_BACKEND=host", "PATH=/bin", "GOCUDA_TEST_X=1"})
	assert.Equal(t, []string{"GOCUDA_MEMORY_POL"}, got)
}

func TestUnknownSetKnowsTheLaunchersVariables(t *testing.T) {
	got := UnknownSet([]string{"GOCUDA_RANK=1", "GOCUDA_WORLD_SIZE=2", "GOCUDA_LOCAL_RANK=1", "GOCUDA_RENDEZVOUS=h:1", "GOCUDA_JOB=j",
		"GOCUDA_RANKS=2", "GOCUDA_NCCL_ID=00"})
	assert.Equal(t, []string{"GOCUDA_NCCL_ID", "GOCUDA_RANKS"}, got, "GOCUDA_NCCL_ID went: the ranks share the id through the rendezvous")
	assert.Equal(t, EnvRank, Nearest("GOCUDA_RANKS"))
	for _, n := range LauncherNames() {
		assert.NotContains(t, Names(), n, "%s is the launcher's, not a knob", n)
	}
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
