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
		{"scalar indexing defaults to warn", map[string]string{}, func(t *testing.T, c Config) { assert.Equal(t, "warn", c.ScalarIndexing) }},
		{"scalar indexing error", map[string]string{EnvScalarIndexing: "Error"}, func(t *testing.T, c Config) { assert.Equal(t, "error", c.ScalarIndexing) }},
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
		{"cufft library", map[string]string{EnvCUFFTLibrary: " /opt/cuda/lib64/libcufft.so.12 "}, func(t *testing.T, c Config) {
			assert.Equal(t, "/opt/cuda/lib64/libcufft.so.12", c.CUFFTLibrary)
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

// Every refusal, word for word: the variable, the value, the accepted
// forms, why (where the forms alone do not say) and the nearest accepted
// value where one is close.
func TestParseRejectsBadValuesNamingVariableValueFormsAndTheNearest(t *testing.T) {
	const (
		limit  = `accepted values are a byte count ("4294967296"), a size with a unit ("4GiB", "12.5GB", "512 MiB"), a share of device memory ("80%"), or "none" or "off" for no limit`
		gc     = `accepted values are a whole number from 1 to 10000 (100, the default, collects when device memory in use reaches twice the live set, as GOGC=100), or off for no pacer`
		bools  = `accepted values are true, false, 1, 0, on, off, yes, no`
		pools  = `accepted values are cuda, binned, split, simple, none (off is none)`
		trim   = `accepted values are a Go duration of at least 10ms (30s, 5m), or off`
		rdv    = `accepted values are a Go duration of at least 100ms (90s, 10m; 2m is the default)`
		units  = `the units are B, KiB, MiB, GiB, TiB, PiB, EiB, kB, MB, GB, TB, PB, EB`
		noZero = `(a limit of 0 bytes would refuse every allocation: for no limit write "none" or "off")`
	)
	tests := []struct {
		variable, value, want string
	}{
		{EnvBackend, "gpu", `GOCUDA_BACKEND="gpu" is not valid: accepted values are auto, cuda, host; did you mean "cuda"?`},
		{EnvBackend, "CPU", `GOCUDA_BACKEND="CPU" is not valid: accepted values are auto, cuda, host; did you mean "host"?`},
		{EnvBackend, "hots", `GOCUDA_BACKEND="hots" is not valid: accepted values are auto, cuda, host; did you mean "host"?`},
		{EnvBackend, "xyz", `GOCUDA_BACKEND="xyz" is not valid: accepted values are auto, cuda, host`},
		{EnvPool, "bined", `GOCUDA_MEMORY_POOL="bined" is not valid: ` + pools + `; did you mean "binned"?`},
		{EnvPool, "splti", `GOCUDA_MEMORY_POOL="splti" is not valid: ` + pools + `; did you mean "split"?`},
		{EnvPool, "of", `GOCUDA_MEMORY_POOL="of" is not valid: ` + pools + `; did you mean "off"?`},
		{EnvPool, "fancy", `GOCUDA_MEMORY_POOL="fancy" is not valid: ` + pools},
		{EnvHardLimit, "-4GiB", `GOCUDA_HARD_MEMORY_LIMIT="-4GiB" is not valid: ` + limit + ` (a size must be a positive number of bytes)`},
		{EnvHardLimit, "120%", `GOCUDA_HARD_MEMORY_LIMIT="120%" is not valid: ` + limit + ` (a share must be a number above 0 and at most 100, followed by %)`},
		{EnvSoftLimit, "0%", `GOCUDA_SOFT_MEMORY_LIMIT="0%" is not valid: ` + limit + ` (a share must be a number above 0 and at most 100, followed by %)`},
		{EnvHardLimit, "1.5", `GOCUDA_HARD_MEMORY_LIMIT="1.5" is not valid: ` + limit + ` (a plain byte count must be a whole number)`},
		{EnvHardLimit, "4 parsecs", `GOCUDA_HARD_MEMORY_LIMIT="4 parsecs" is not valid: ` + limit + ` (unknown unit "parsecs": ` + units + `)`},
		{EnvHardLimit, "4 GiBs", `GOCUDA_HARD_MEMORY_LIMIT="4 GiBs" is not valid: ` + limit + ` (unknown unit "GiBs": ` + units + `); did you mean "4GiB"?`},
		{EnvHardLimit, "abc", `GOCUDA_HARD_MEMORY_LIMIT="abc" is not valid: ` + limit + ` (a size starts with a number)`},
		{EnvSoftLimit, "non", `GOCUDA_SOFT_MEMORY_LIMIT="non" is not valid: ` + limit + ` (a size starts with a number); did you mean "none"?`},
		{EnvHardLimit, "1.2.3GB", `GOCUDA_HARD_MEMORY_LIMIT="1.2.3GB" is not valid: ` + limit + ` ("1.2.3" is not a number)`},
		{EnvHardLimit, "99999999999999999999", `GOCUDA_HARD_MEMORY_LIMIT="99999999999999999999" is not valid: ` + limit + ` (too large: a size is at most 8 EiB)`},
		{EnvHardLimit, "99999999999 EiB", `GOCUDA_HARD_MEMORY_LIMIT="99999999999 EiB" is not valid: ` + limit + ` (too large: a size is at most 8 EiB)`},
		{EnvHardLimit, "0", `GOCUDA_HARD_MEMORY_LIMIT="0" is not valid: ` + limit + ` ` + noZero},
		{EnvSoftLimit, "0", `GOCUDA_SOFT_MEMORY_LIMIT="0" is not valid: ` + limit + ` ` + noZero},
		{EnvHardLimit, "0 MiB", `GOCUDA_HARD_MEMORY_LIMIT="0 MiB" is not valid: ` + limit + ` ` + noZero},
		{EnvGCEarly, "maybe", `GOCUDA_GC_EARLY="maybe" is not valid: ` + bools},
		{EnvGCEarly, "ture", `GOCUDA_GC_EARLY="ture" is not valid: ` + bools + `; did you mean "true"?`},
		{EnvStreamRace, "yse", `GOCUDA_STREAM_CHECK="yse" is not valid: ` + bools + `; did you mean "yes"?`},
		{EnvGCPercent, "0", `GOCUDA_GC_PERCENT="0" is not valid: ` + gc + ` (0 would collect at every allocation: for no pacer write "off")`},
		{EnvGCPercent, "-1", `GOCUDA_GC_PERCENT="-1" is not valid: ` + gc + ` (-1 is outside 1 to 10000)`},
		{EnvGCPercent, "20000", `GOCUDA_GC_PERCENT="20000" is not valid: ` + gc + ` (20000 is outside 1 to 10000)`},
		{EnvGCPercent, "1.5", `GOCUDA_GC_PERCENT="1.5" is not valid: ` + gc + ` ("1.5" is not a whole number)`},
		{EnvGCPercent, "none", `GOCUDA_GC_PERCENT="none" is not valid: ` + gc + ` ("none" is not a whole number); did you mean "off"?`},
		{EnvDebug, "leaks,everything", `GOCUDA_DEBUG="leaks,everything" is not valid: accepted values are a comma-separated list of leaks, log ("everything" is not one of them)`},
		{EnvDebug, "leak", `GOCUDA_DEBUG="leak" is not valid: accepted values are a comma-separated list of leaks, log ("leak" is not one of them); did you mean "leaks"?`},
		{EnvDebug, "leaks,lgo", `GOCUDA_DEBUG="leaks,lgo" is not valid: accepted values are a comma-separated list of leaks, log ("lgo" is not one of them); did you mean "leaks,log"?`},
		{EnvIdleTrim, "30", `GOCUDA_IDLE_TRIM="30" is not valid: ` + trim + ` (a number needs a unit: ns, us, ms, s, m or h); did you mean "30s"?`},
		{EnvIdleTrim, "5 min", `GOCUDA_IDLE_TRIM="5 min" is not valid: ` + trim + ` (a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m); did you mean "5m"?`},
		{EnvIdleTrim, "abc", `GOCUDA_IDLE_TRIM="abc" is not valid: ` + trim + ` (a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m)`},
		{EnvIdleTrim, "1ms", `GOCUDA_IDLE_TRIM="1ms" is not valid: ` + trim + ` (1ms is shorter than 10ms: the pool would be trimmed while in use)`},
		{EnvIdleTrim, "-5s", `GOCUDA_IDLE_TRIM="-5s" is not valid: ` + trim + ` (-5s is shorter than 10ms: the pool would be trimmed while in use)`},
		{EnvScalarIndexing, "deny", `GOCUDA_SCALAR_INDEXING="deny" is not valid: accepted values are allow, warn, error; did you mean "error"?`},
		{EnvScalarIndexing, "alow", `GOCUDA_SCALAR_INDEXING="alow" is not valid: accepted values are allow, warn, error; did you mean "allow"?`},
		{EnvRendezvousTimeout, "off", `GOCUDA_RENDEZVOUS_TIMEOUT="off" is not valid: ` + rdv + ` ("off": the wait cannot be unbounded, since a rank that never comes would hold the others forever: give a duration such as 30m)`},
		{EnvRendezvousTimeout, "0", `GOCUDA_RENDEZVOUS_TIMEOUT="0" is not valid: ` + rdv + ` ("0": the wait cannot be unbounded, since a rank that never comes would hold the others forever: give a duration such as 30m)`},
		{EnvRendezvousTimeout, "120", `GOCUDA_RENDEZVOUS_TIMEOUT="120" is not valid: ` + rdv + ` (a number needs a unit: ns, us, ms, s, m or h); did you mean "120s"?`},
		{EnvRendezvousTimeout, "2 hours", `GOCUDA_RENDEZVOUS_TIMEOUT="2 hours" is not valid: ` + rdv + ` (a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m); did you mean "2h"?`},
		{EnvRendezvousTimeout, "1ms", `GOCUDA_RENDEZVOUS_TIMEOUT="1ms" is not valid: ` + rdv + ` (1ms is shorter than 100ms: the ranks could not even connect)`},
		{EnvRendezvousTimeout, "-1m", `GOCUDA_RENDEZVOUS_TIMEOUT="-1m" is not valid: ` + rdv + ` (-1m0s is shorter than 100ms: the ranks could not even connect)`},
		{EnvKernelCache, "cache/k", `GOCUDA_KERNEL_CACHE="cache/k" is not valid: accepted values are an absolute folder path, or off ("cache/k" is not an absolute path)`},
		{EnvKernelCache, "of", `GOCUDA_KERNEL_CACHE="of" is not valid: accepted values are an absolute folder path, or off ("of" is not an absolute path); did you mean "off"?`},
	}
	for _, tt := range tests {
		t.Run(tt.variable+"="+tt.value, func(t *testing.T) {
			c, err := Parse(env(map[string]string{tt.variable: " " + tt.value + " "}))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.variable, e.Var)
			assert.Equal(t, tt.value, e.Value, "the value as typed, less the spaces around it")
			assert.Equal(t, []string{tt.variable}, c.Invalid)
			if e.Suggestion != "" {
				_, err := Parse(env(map[string]string{tt.variable: e.Suggestion}))
				assert.NoError(t, err, "only an accepted value is suggested")
			}
		})
	}
}

// A user who sets several bad knobs hears of all of them at once, not one
// per run; the knobs that parsed are in the Config, the others keep their
// defaults.
func TestParseReportsEveryBadKnobInOneError(t *testing.T) {
	c, err := Parse(env(map[string]string{
		EnvPool: "splti", EnvBackend: "gpu", EnvDebug: "leak", EnvHardLimit: "abc",
		EnvIdleTrim: "5m", EnvGCEarly: "off",
		EnvGCPercent: "lots", EnvRendezvousTimeout: "soon", EnvKernelCache: "rel/dir",
	}))
	require.Error(t, err)
	assert.Equal(t, `GOCUDA_BACKEND="gpu" is not valid: accepted values are auto, cuda, host; did you mean "cuda"?
GOCUDA_DEBUG="leak" is not valid: accepted values are a comma-separated list of leaks, log ("leak" is not one of them); did you mean "leaks"?
GOCUDA_GC_PERCENT="lots" is not valid: accepted values are a whole number from 1 to 10000 (100, the default, collects when device memory in use reaches twice the live set, as GOGC=100), or off for no pacer ("lots" is not a whole number)
GOCUDA_HARD_MEMORY_LIMIT="abc" is not valid: accepted values are a byte count ("4294967296"), a size with a unit ("4GiB", "12.5GB", "512 MiB"), a share of device memory ("80%"), or "none" or "off" for no limit (a size starts with a number)
GOCUDA_KERNEL_CACHE="rel/dir" is not valid: accepted values are an absolute folder path, or off ("rel/dir" is not an absolute path)
GOCUDA_MEMORY_POOL="splti" is not valid: accepted values are cuda, binned, split, simple, none (off is none); did you mean "split"?
GOCUDA_RENDEZVOUS_TIMEOUT="soon" is not valid: accepted values are a Go duration of at least 100ms (90s, 10m; 2m is the default) (a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m)`, err.Error())
	assert.Equal(t, []string{EnvBackend, EnvDebug, EnvGCPercent, EnvHardLimit, EnvKernelCache, EnvPool, EnvRendezvousTimeout}, c.Invalid,
		"sorted as Names sorts them")

	var first *Error
	require.ErrorAs(t, err, &first)
	assert.Equal(t, EnvBackend, first.Var, "errors.As finds the first")
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "an errors.Join of one *Error per knob")
	require.Len(t, joined.Unwrap(), 7)
	for i, e := range joined.Unwrap() {
		var ce *Error
		require.ErrorAs(t, e, &ce)
		assert.Equal(t, c.Invalid[i], ce.Var)
	}

	assert.Equal(t, 5*time.Minute, c.IdleTrim, "the knobs that parsed are kept")
	assert.False(t, c.GCEarly)
	assert.Equal(t, "auto", c.Backend, "a bad knob keeps its default")
	assert.Equal(t, DefaultPool, c.Pool)
	assert.False(t, c.HardLimit.Set())
	assert.Empty(t, c.Debug, "a bad list turns nothing on")
	assert.Equal(t, DefaultGCPercent, c.GCPercent)
	assert.Equal(t, DefaultRendezvousTimeout, c.RendezvousTimeout)
	assert.Equal(t, DefaultKernelCache(), c.KernelCache)
	assert.Equal(t, "splti", c.Set[EnvPool], "raw values kept for doctor")
}

func TestParseSucceedsWithNoInvalidKnobs(t *testing.T) {
	c, err := Parse(env(map[string]string{EnvPool: "binned"}))
	require.NoError(t, err)
	assert.Empty(t, c.Invalid)
}

// No message shows a parser's own words (strconv's, time's, humanize's):
// they say where the parse failed in Go, not what the user should write.
func TestNoMessageShowsAParsersWords(t *testing.T) {
	values := []string{"abc", "4 parsecs", "1.2.3GB", "1,2,3", "..", "4..GiB", "1e999", "99999999999999999999999", "999999999 EiB",
		"30", "5 min", "1h30", "-", "+1", "%", "x%", "NaN%", "1e9", "0x10", "1_000", "9223372036854775808", "18446744073709551616"}
	for _, name := range Names() {
		for _, v := range values {
			_, err := Parse(env(map[string]string{name: v}))
			if err == nil {
				continue
			}
			for _, internal := range []string{"strconv", "time:", "ParseFloat", "ParseUint", "invalid syntax", "parse error", "unhandled size name", "humanize"} {
				assert.NotContains(t, err.Error(), internal, "%s=%q", name, v)
			}
		}
	}
}

func TestParseSizeSaysWhatIsWrongInPlainWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"1048576", 1 << 20, ""},
		{"1.5 KiB", 1536, ""},
		{"4gib", 4 << 30, ""},
		{"2k", 2000, ""},
		{"", 0, "empty size"},
		{"-1", 0, "a size must be a positive number of bytes"},
		{"1.5", 0, "a plain byte count must be a whole number"},
		{"big", 0, "a size starts with a number"},
		{"KiB", 0, "a size starts with a number"},
		{".GiB", 0, "a size starts with a number"},
		{"1.2.3 MiB", 0, `"1.2.3" is not a number`},
		{"4 parsecs", 0, `unknown unit "parsecs": the units are B, KiB, MiB, GiB, TiB, PiB, EiB, kB, MB, GB, TB, PB, EB`},
		{"99999999999999999999", 0, "too large: a size is at most 8 EiB"},
		{"9 EiB", 0, "too large: a size is at most 8 EiB"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			n, err := ParseSize(tc.in)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
		})
	}
}

func TestDurationsSayWhatIsWrongInPlainWords(t *testing.T) {
	for _, tc := range []struct {
		parse func(string) (time.Duration, error)
		in    string
		want  time.Duration
		err   string
	}{
		{ParseIdleTrim, "1m30s", 90 * time.Second, ""},
		{ParseIdleTrim, "0", 0, ""},
		{ParseIdleTrim, "30", 0, "a number needs a unit: ns, us, ms, s, m or h"},
		{ParseIdleTrim, "thirty seconds", 0, "a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m"},
		{ParseRendezvousTimeout, "10m", 10 * time.Minute, ""},
		{ParseRendezvousTimeout, "1.5", 0, "a number needs a unit: ns, us, ms, s, m or h"},
		{ParseRendezvousTimeout, "5 m", 0, "a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m"},
	} {
		d, err := tc.parse(tc.in)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, d, tc.in)
	}
}

func TestParseRejectsSoftLimitAboveHardLimitNamingBoth(t *testing.T) {
	c, err := Parse(env(map[string]string{EnvSoftLimit: "8GiB", EnvHardLimit: "4 GiB"}))
	require.Error(t, err)
	assert.Equal(t, []string{EnvSoftLimit}, c.Invalid)
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
			// Plain words, never the parser's.
			require.NotContains(t, err.Error(), "strconv")
			require.NotContains(t, err.Error(), "unhandled size name")
			return
		}
		if l.Percent > 0 {
			require.LessOrEqual(t, l.Percent, 100.0)
			require.LessOrEqual(t, l.Resolve(1<<40), uint64(1<<40))
		}
		require.LessOrEqual(t, l.Bytes, uint64(math.MaxInt64))
	})
}
