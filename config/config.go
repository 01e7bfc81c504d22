package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/internal/suggest"
)

// Variable names, in one place so doctor, errors and docs agree.
const (
	EnvBackend    = "GOCUDA_BACKEND"
	EnvPool       = "GOCUDA_MEMORY_POOL"
	EnvSoftLimit  = "GOCUDA_SOFT_MEMORY_LIMIT"
	EnvHardLimit  = "GOCUDA_HARD_MEMORY_LIMIT"
	EnvGCEarly    = "GOCUDA_GC_EARLY"
	EnvGCPercent  = "GOCUDA_GC_PERCENT"
	EnvDebug      = "GOCUDA_DEBUG"
	EnvStreamRace = "GOCUDA_STREAM_CHECK"
	EnvIdleTrim   = "GOCUDA_IDLE_TRIM"
	EnvTrace      = "GOCUDA_TRACE"
	// EnvNVRTCLibrary names the NVRTC library file to load instead of
	// searching for one (package nvrtc reads it).
	EnvNVRTCLibrary = "GOCUDA_NVRTC_LIBRARY"
	EnvKernelCache  = "GOCUDA_KERNEL_CACHE"
	EnvNCCL         = "GOCUDA_NCCL_LIBRARY"
	// EnvCUBLASLibrary names the cuBLAS library file to load instead of
	// searching for one (package blas reads it).
	EnvCUBLASLibrary = "GOCUDA_CUBLAS_LIBRARY"
	// EnvCURANDLibrary names the cuRAND library file to load instead of
	// searching for one (package curand reads it).
	EnvCURANDLibrary = "GOCUDA_CURAND_LIBRARY"
	// EnvCUFFTLibrary names the cuFFT library file to load instead of
	// searching for one (package cufft reads it).
	EnvCUFFTLibrary = "GOCUDA_CUFFT_LIBRARY"
	// EnvRendezvousTimeout bounds how long the ranks of a multi-process
	// job wait for each other (package rendezvous).
	EnvRendezvousTimeout = "GOCUDA_RENDEZVOUS_TIMEOUT"
	// EnvScalarIndexing says what reading or writing one element of an
	// array (At, SetAt: a synchronising copy each) does: ScalarIndexing.
	EnvScalarIndexing = "GOCUDA_SCALAR_INDEXING"
	// EnvTF32 allows float32 matrix products on TF32 tensor cores
	// (package blas): off by default, as PyTorch's allow_tf32.
	EnvTF32 = "GOCUDA_TF32"
)

// The launcher's variables: what a launcher sets for each rank of a
// program that runs one process per GPU, in the manner of torchrun's
// RANK, WORLD_SIZE and LOCAL_RANK (docs/nccl.md, Launching ranks).
// `gocuda launch` sets them; package rendezvous reads them (with
// torchrun's, Open MPI's and Slurm's). They are not knobs; they are
// listed so that they are not reported as unknown.
const (
	EnvRank      = "GOCUDA_RANK"       // this process's rank, 0 to GOCUDA_WORLD_SIZE-1
	EnvWorldSize = "GOCUDA_WORLD_SIZE" // the number of ranks
	EnvLocalRank = "GOCUDA_LOCAL_RANK" // the device ordinal of this rank on its host
	// EnvRendezvous is host:port of the rendezvous that gocuda launch
	// serves; under mpirun or srun, where rank 0 serves it instead.
	EnvRendezvous = "GOCUDA_RENDEZVOUS"
	// EnvJob is the job's identity: a rendezvous refuses ranks that come
	// with another (a leftover of an earlier run).
	EnvJob = "GOCUDA_JOB"
)

// LauncherNames lists the launcher's variables, sorted.
func LauncherNames() []string {
	n := []string{EnvRank, EnvWorldSize, EnvLocalRank, EnvRendezvous, EnvJob}
	sort.Strings(n)
	return n
}

// Backends and pools accepted by GOCUDA_BACKEND and GOCUDA_MEMORY_POOL.
// Pools lists the strategies that register with package pool (the root
// package links them all, and its test fails when Pools and
// pool.Registered differ); config stays below pool, so it keeps the list.
var (
	Backends = []string{"auto", "cuda", "host"}
	Pools    = []string{"cuda", "binned", "split", "simple", "none"}
	// DebugFlags are the words GOCUDA_DEBUG accepts, comma separated.
	DebugFlags = []string{"leaks", "log"}
	// ScalarIndexing is what GOCUDA_SCALAR_INDEXING accepts: allow
	// (silently), warn (the default: a warning once per call site) or
	// error (At and SetAt fail), as CUDA.jl's allowscalar.
	ScalarIndexing = []string{"allow", "warn", "error"}
)

// DefaultPool is the pool used when GOCUDA_MEMORY_POOL is unset.
const DefaultPool = "split"

// Config is every knob as parsed.
type Config struct {
	Backend   string // auto, cuda or host
	Pool      string // one of Pools
	SoftLimit Limit
	HardLimit Limit
	GCEarly   bool
	// GCPercent is GOCUDA_GC_PERCENT, the pacer of device memory (as GOGC
	// for Go's heap): device bytes in use are kept near (1 + GCPercent/100)
	// times what the last collection left live.
	// DefaultGCPercent (100) when unset; GCPercentOff (-1) for off, which
	// leaves only pressure-driven collection.
	GCPercent int
	// StreamCheck turns on the host backend's stream checker
	// (GOCUDA_STREAM_CHECK), which reports memory used on one stream while
	// another stream's work on it is not ordered before.
	StreamCheck bool
	Debug       map[string]bool
	// IdleTrim is GOCUDA_IDLE_TRIM: a device pool that served no
	// allocation or free for this long gives its cached memory back to the
	// driver. 0 (the default, or off) never trims for idleness.
	IdleTrim time.Duration
	// Trace is GOCUDA_TRACE: the file that every allocation and free of
	// the device pools is recorded to, in the format gocuda replay reads
	// (gzip-compressed when it ends in .gz). "" records nothing.
	Trace string
	// NVRTCLibrary is GOCUDA_NVRTC_LIBRARY: the NVRTC library file to
	// load; "" searches the usual places (package nvrtc).
	NVRTCLibrary string
	// KernelCache is GOCUDA_KERNEL_CACHE: the folder where kernels
	// compiled at run time are kept between processes. Unset, it is
	// gocuda/kernels under os.UserCacheDir; "" (off) keeps nothing on disk.
	KernelCache string
	// NCCLLibrary is GOCUDA_NCCL_LIBRARY: the NCCL library (a file such
	// as /opt/nccl/lib/libnccl.so.2) that package nccl loads instead of
	// searching the system and pip's nvidia-nccl. "" searches.
	NCCLLibrary string
	// CUBLASLibrary is GOCUDA_CUBLAS_LIBRARY: the cuBLAS library file
	// that package blas loads; "" searches the usual places.
	CUBLASLibrary string
	// CURANDLibrary is GOCUDA_CURAND_LIBRARY: the cuRAND library file
	// that package curand loads; "" searches the usual places.
	CURANDLibrary string
	// CUFFTLibrary is GOCUDA_CUFFT_LIBRARY: the cuFFT library file that
	// package cufft loads; "" searches the usual places.
	CUFFTLibrary string
	// ScalarIndexing is GOCUDA_SCALAR_INDEXING: allow, warn (default) or
	// error.
	ScalarIndexing string
	// TF32 is GOCUDA_TF32: float32 matrix products may round their
	// inputs to TF32 for the tensor cores of GPUs of compute capability
	// 8.0 and newer (package blas). Off by default.
	TF32 bool
	// RendezvousTimeout is GOCUDA_RENDEZVOUS_TIMEOUT: how long the ranks
	// of a multi-process job wait for each other to arrive, and for each
	// value shared or barrier passed (package rendezvous).
	// DefaultRendezvousTimeout when unset.
	RendezvousTimeout time.Duration
	// Invalid lists the variables whose values did not parse, sorted as
	// Names sorts them; each keeps its default above. Empty when Parse
	// succeeded.
	Invalid []string
	// Set lists each GOCUDA_ variable present in the environment with its
	// raw value, for doctor.
	Set map[string]string
}

// Error is a knob that did not parse.
type Error struct {
	Var, Value, Accepted string
	// Err is why the value was refused, when the accepted forms alone do
	// not say it ("a share must be ... at most 100"); nil otherwise.
	Err error
	// Suggestion is the accepted value nearest to Value ("split" for
	// "splti"), or "" when none is close.
	Suggestion string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s=%q is not valid: accepted values are %s", e.Var, e.Value, e.Accepted)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// FromEnv parses the process environment.
func FromEnv() (Config, error) { return Parse(os.LookupEnv) }

// Parse parses knobs read through lookup (os.LookupEnv in programs, a map
// in tests). Every knob is read, so that one run reports every mistake:
// the error joins (errors.Join) one *Error per knob that did not parse,
// sorted by variable name, and errors.As finds the first. The Config
// holds every knob that did parse; those that did not keep their
// defaults and are listed in Invalid.
func Parse(lookup func(string) (string, bool)) (Config, error) {
	c, bad := parse(lookup)
	slices.SortStableFunc(bad, func(a, b *Error) int { return strings.Compare(a.Var, b.Var) })
	errs := make([]error, len(bad))
	for i, e := range bad {
		errs[i] = e
		c.Invalid = append(c.Invalid, e.Var)
	}
	return c, errors.Join(errs...)
}

// boolWords are the spellings of a switch that errors name (ParseBool
// also takes t, f, y and n).
var boolWords = []string{"true", "false", "1", "0", "on", "off", "yes", "no"}

var boolForms = strings.Join(boolWords, ", ")

// knob is how one variable is read: set parses a value (never empty) into
// c, returning why it was refused, or errRefused when the accepted forms
// say it all; suggest names the accepted value nearest to a refused one.
type knob struct {
	name, accepted string
	set            func(c *Config, v string) error
	suggest        func(v string) string
}

// errRefused is a refusal that the accepted forms explain by themselves
// (a value outside a short list).
var errRefused = errors.New("refused")

func knobs() []knob {
	str := func(name string, field func(c *Config) *string) knob {
		return knob{name: name, set: func(c *Config, v string) error { *field(c) = v; return nil }}
	}
	switcher := func(name string, field func(c *Config) *bool) knob {
		return knob{name: name, accepted: boolForms, set: func(c *Config, v string) error {
			b, err := ParseBool(v)
			if err != nil {
				return errRefused
			}
			*field(c) = b
			return nil
		}, suggest: func(v string) string { return nearest(v, boolWords, nil) }}
	}
	return []knob{
		{name: EnvBackend, accepted: strings.Join(Backends, ", "), set: func(c *Config, v string) error {
			return oneOf(&c.Backend, v, Backends)
		}, suggest: func(v string) string {
			// "gpu" is far from "cuda" in spelling, not in meaning.
			return nearest(v, Backends, map[string]string{"gpu": "cuda", "nvidia": "cuda", "cpu": "host"})
		}},
		{name: EnvPool, accepted: strings.Join(Pools, ", ") + " (off is none)", set: func(c *Config, v string) error {
			// off is none, as for the limits and GOMEMLIMIT: no pool caching.
			if strings.EqualFold(v, "off") {
				v = "none"
			}
			return oneOf(&c.Pool, v, Pools)
		}, suggest: func(v string) string { return nearest(v, append(slices.Clone(Pools), "off"), nil) }},
		{name: EnvSoftLimit, accepted: LimitForms, set: func(c *Config, v string) (err error) {
			c.SoftLimit, err = ParseLimit(v)
			return err
		}, suggest: suggestLimit},
		{name: EnvHardLimit, accepted: LimitForms, set: func(c *Config, v string) (err error) {
			c.HardLimit, err = ParseLimit(v)
			return err
		}, suggest: suggestLimit},
		switcher(EnvGCEarly, func(c *Config) *bool { return &c.GCEarly }),
		{name: EnvGCPercent, accepted: GCPercentForms, set: func(c *Config, v string) (err error) {
			c.GCPercent, err = ParseGCPercent(v)
			return err
		}, suggest: func(v string) string {
			return nearest(v, []string{"off"}, map[string]string{"none": "off", "no": "off", "false": "off"})
		}},
		switcher(EnvStreamRace, func(c *Config) *bool { return &c.StreamCheck }),
		switcher(EnvTF32, func(c *Config) *bool { return &c.TF32 }),
		{name: EnvIdleTrim, accepted: IdleTrimForms, set: func(c *Config, v string) (err error) {
			c.IdleTrim, err = ParseIdleTrim(v)
			return err
		}, suggest: func(v string) string { return suggestDuration(v, []string{"off", "none"}) }},
		str(EnvTrace, func(c *Config) *string { return &c.Trace }),
		str(EnvNVRTCLibrary, func(c *Config) *string { return &c.NVRTCLibrary }),
		{name: EnvKernelCache, accepted: KernelCacheForms, set: func(c *Config, v string) (err error) {
			c.KernelCache, err = ParseKernelCache(v)
			return err
		}, suggest: func(v string) string { return nearest(v, []string{"off", "none"}, nil) }},
		str(EnvNCCL, func(c *Config) *string { return &c.NCCLLibrary }),
		str(EnvCUBLASLibrary, func(c *Config) *string { return &c.CUBLASLibrary }),
		str(EnvCURANDLibrary, func(c *Config) *string { return &c.CURANDLibrary }),
		str(EnvCUFFTLibrary, func(c *Config) *string { return &c.CUFFTLibrary }),
		{name: EnvRendezvousTimeout, accepted: RendezvousTimeoutForms, set: func(c *Config, v string) (err error) {
			c.RendezvousTimeout, err = ParseRendezvousTimeout(v)
			return err
		}, suggest: func(v string) string { return suggestDuration(v, nil) }},
		{name: EnvScalarIndexing, accepted: strings.Join(ScalarIndexing, ", "), set: func(c *Config, v string) error {
			return oneOf(&c.ScalarIndexing, strings.ToLower(v), ScalarIndexing)
		}, suggest: func(v string) string {
			return nearest(v, ScalarIndexing, map[string]string{"on": "allow", "true": "allow", "off": "error", "false": "error", "deny": "error"})
		}},
		{name: EnvDebug, accepted: "a comma-separated list of " + strings.Join(DebugFlags, ", "), set: func(c *Config, v string) error {
			on := map[string]bool{}
			for _, w := range strings.Split(v, ",") {
				w = strings.ToLower(strings.TrimSpace(w))
				if w == "" {
					continue
				}
				if !slices.Contains(DebugFlags, w) {
					// A bad word turns nothing on: half a setting would
					// leave the user guessing which half took.
					return fmt.Errorf("%q is not one of them", w)
				}
				on[w] = true
			}
			c.Debug = on
			return nil
		}, suggest: suggestDebug},
	}
}

func parse(lookup func(string) (string, bool)) (Config, []*Error) {
	c := Config{Backend: "auto", Pool: DefaultPool, GCEarly: true, GCPercent: DefaultGCPercent, RendezvousTimeout: DefaultRendezvousTimeout, ScalarIndexing: "warn",
		KernelCache: DefaultKernelCache(), Debug: map[string]bool{}, Set: map[string]string{}}
	var bad []*Error
	for _, k := range knobs() {
		raw, ok := lookup(k.name)
		if !ok {
			continue
		}
		c.Set[k.name] = raw
		v := strings.TrimSpace(raw)
		if v == "" {
			continue // empty is unset: the default
		}
		// A refused value leaves the default: set may have written a zero.
		next := c
		err := k.set(&next, v)
		if err == nil {
			c = next
			continue
		}
		e := &Error{Var: k.name, Value: v, Accepted: k.accepted}
		if !errors.Is(err, errRefused) {
			e.Err = err
		}
		if k.suggest != nil {
			// Only a value that would be accepted is suggested.
			scratch := c
			if sv := k.suggest(v); sv != "" && sv != v && k.set(&scratch, sv) == nil {
				e.Suggestion = sv
			}
		}
		bad = append(bad, e)
	}
	// Shares are checked against a device's memory in ResolveLimits; two
	// byte counts can be compared now, if both parsed.
	if c.SoftLimit.Percent == 0 && c.HardLimit.Percent == 0 {
		if _, _, err := c.ResolveLimits(0, -1); err != nil {
			var e *Error
			if errors.As(err, &e) {
				bad = append(bad, e)
			}
		}
	}
	return c, bad
}

// oneOf sets *dst to v, lowered, if it is in accepted.
func oneOf(dst *string, v string, accepted []string) error {
	l := strings.ToLower(v)
	if !slices.Contains(accepted, l) {
		return errRefused
	}
	*dst = l
	return nil
}

// nearest is the word of words, or the meaning in synonyms, closest to v
// (case aside), or "" when none is close.
func nearest(v string, words []string, synonyms map[string]string) string {
	l := strings.ToLower(strings.TrimSpace(v))
	if s, ok := synonyms[l]; ok {
		return s
	}
	return suggest.Nearest(l, words)
}

// suggestDebug corrects each word of a GOCUDA_DEBUG list, or suggests
// nothing when one word has no near flag.
func suggestDebug(v string) string {
	var out []string
	for _, w := range strings.Split(v, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		if !slices.Contains(DebugFlags, w) {
			if w = nearest(w, DebugFlags, nil); w == "" {
				return ""
			}
		}
		out = append(out, w)
	}
	return strings.Join(out, ",")
}

// suggestLimit corrects a limit's word ("non") or unit ("4 GiBs").
func suggestLimit(v string) string {
	num, unit := splitNumber(v)
	if num == "" {
		return nearest(v, []string{"none", "off"}, nil)
	}
	if u := nearestUnit(unit); u != "" {
		return num + u
	}
	return ""
}

// durationUnits maps the unit words people write to Go's (5min is 5m).
var durationUnits = map[string]string{
	"": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"min": "m", "mins": "m", "minute": "m", "minutes": "m",
	"hr": "h", "hrs": "h", "hour": "h", "hours": "h",
	"msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
}

// suggestDuration corrects a duration written without a Go unit ("30",
// "5 min"), or a near word.
func suggestDuration(v string, words []string) string {
	num, unit := splitNumber(v)
	if num == "" {
		return nearest(v, words, nil)
	}
	if u, ok := durationUnits[strings.ToLower(unit)]; ok {
		if _, err := time.ParseDuration(num + u); err == nil {
			return num + u
		}
	}
	return ""
}

// ResolveLimits turns the soft and hard limits into bytes for device
// ordinal, which has total bytes of memory (ordinal -1: no device, the
// limits are absolute); 0 means no limit. A soft limit above the hard
// limit is an *Error naming both variables, their values as written and
// what they came to.
func (c Config) ResolveLimits(total uint64, ordinal int) (soft, hard uint64, err error) {
	soft, hard = c.SoftLimit.Resolve(total), c.HardLimit.Resolve(total)
	if hard == 0 || soft <= hard {
		return soft, hard, nil
	}
	softRaw, hardRaw := strings.TrimSpace(c.Set[EnvSoftLimit]), strings.TrimSpace(c.Set[EnvHardLimit])
	e := &Error{Var: EnvSoftLimit, Value: c.Set[EnvSoftLimit],
		Accepted: fmt.Sprintf("a limit no larger than %s=%q", EnvHardLimit, c.Set[EnvHardLimit])}
	if c.SoftLimit.Percent > 0 || c.HardLimit.Percent > 0 {
		// Say what the shares came to: "80%" is only too large on a
		// device of a given size.
		e.Err = fmt.Errorf("on device %d, of %s, %s is %s and %s is %s", ordinal, humanize.IBytes(total),
			softRaw, humanize.IBytes(soft), hardRaw, humanize.IBytes(hard))
	}
	return soft, hard, e
}

// Names lists every knob, sorted, for doctor.
func Names() []string {
	n := []string{EnvBackend, EnvPool, EnvSoftLimit, EnvHardLimit, EnvGCEarly, EnvGCPercent, EnvDebug, EnvStreamRace, EnvIdleTrim, EnvTrace, EnvNVRTCLibrary, EnvKernelCache, EnvNCCL, EnvCUBLASLibrary, EnvCURANDLibrary, EnvCUFFTLibrary, EnvRendezvousTimeout, EnvScalarIndexing, EnvTF32}
	sort.Strings(n)
	return n
}

// Nearest returns the known knob closest in spelling to name
// ("GOCUDA_MEMORY_POOL" for "GOCUDA_MEMROY_POOL"), or "" when none is
// close.
func Nearest(name string) string {
	const prefix = "GOCUDA_"
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return ""
	}
	// Compare what follows the prefix: every knob shares it, and it would
	// make any two names look close.
	names := append(Names(), LauncherNames()...)
	tails := make([]string, 0, len(names))
	for _, n := range names {
		tails = append(tails, strings.TrimPrefix(n, prefix))
	}
	if t := suggest.Nearest(rest, tails); t != "" {
		return prefix + t
	}
	return ""
}

// UnknownMessage is what is said about an unknown GOCUDA_ variable: that
// it is not a knob, and the knob it may have meant.
func UnknownMessage(name string) string {
	msg := name + " is set but gocuda has no such knob, so it has no effect"
	if n := Nearest(name); n != "" {
		return msg + "; did you mean " + n + "?"
	}
	return msg + "; the knobs are " + strings.Join(Names(), ", ")
}

// WarnUnknown logs a warning through l for each unknown GOCUDA_ variable
// in environ (UnknownSet), naming the nearest knob, and returns how many
// it found.
func WarnUnknown(l *slog.Logger, environ []string) int {
	unknown := UnknownSet(environ)
	for _, name := range unknown {
		l.Warn("gocuda: "+UnknownMessage(name), "variable", name, "nearest", Nearest(name))
	}
	return len(unknown)
}

var warnedUnknown sync.Once

// WarnUnknownOnce warns through slog.Default, the first time it is called
// in the process, about each unknown GOCUDA_ variable of the process's
// environment. The backend calls it on first use, not at import, so that
// a program has set up its logger by then.
func WarnUnknownOnce() {
	warnedUnknown.Do(func() { WarnUnknown(slog.Default(), os.Environ()) })
}

// UnknownSet returns GOCUDA_ variables in the environment that gocuda does
// not know (neither knobs nor the launcher's variables), so that a
// misspelt knob is reported instead of ignored.
func UnknownSet(environ []string) []string {
	known := map[string]bool{}
	for _, n := range append(Names(), LauncherNames()...) {
		known[n] = true
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GOCUDA_") && !known[name] && !strings.HasPrefix(name, "GOCUDA_TEST_") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ParseBool accepts the usual spellings of a switch.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes", "t", "y":
		return true, nil
	case "0", "false", "off", "no", "f", "n":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", v)
}

// LimitForms describes what ParseLimit accepts, for error messages.
const LimitForms = `a byte count ("4294967296"), a size with a unit ("4GiB", "12.5GB", "512 MiB"), a share of device memory ("80%"), or "none" or "off" for no limit`

// Limit is a memory limit: an absolute byte count or a share of the
// device's memory. The zero Limit means no limit.
type Limit struct {
	Bytes   uint64
	Percent float64 // (0, 100]; 0 when Bytes is used
}

// Set reports whether a limit is in force.
func (l Limit) Set() bool { return l.Bytes > 0 || l.Percent > 0 }

// Resolve turns the limit into bytes for a device with total bytes of
// memory; 0 means no limit.
func (l Limit) Resolve(total uint64) uint64 {
	if l.Percent > 0 {
		return uint64(math.Floor(float64(total) * l.Percent / 100))
	}
	return l.Bytes
}

func (l Limit) String() string {
	switch {
	case l.Percent > 0:
		return strconv.FormatFloat(l.Percent, 'f', -1, 64) + "%"
	case l.Bytes > 0:
		return humanize.IBytes(l.Bytes)
	}
	return "none"
}

// ParseLimit parses a memory limit: see LimitForms. "none" and "off" are
// no limit. "0" and "" are errors: a limit of no bytes would refuse every
// allocation, and neither reads unambiguously as "no limit" (an unset or
// empty variable is the environment's way to say that).
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "none", "off":
		return Limit{}, nil
	case "":
		return Limit{}, errors.New(`empty limit: for no limit write "none" or "off"`)
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > 100 {
			return Limit{}, fmt.Errorf("a share must be a number above 0 and at most 100, followed by %%")
		}
		return Limit{Percent: f}, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return Limit{}, err
	}
	if n == 0 {
		return Limit{}, errors.New(`a limit of 0 bytes would refuse every allocation: for no limit write "none" or "off"`)
	}
	return Limit{Bytes: n}, nil
}

// ParseSize parses a byte count with an optional unit ("1048576", "1MiB",
// "1.5 GB"). Plain numbers must be whole; negative sizes and sizes over
// 2^63 are errors. An error says what is wrong in words of its own, never
// a parser's.
func ParseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty size")
	}
	if s[0] == '-' || s[0] == '+' {
		return 0, errors.New("a size must be a positive number of bytes")
	}
	if isDigits(s) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > math.MaxInt64 {
			return 0, errTooLarge
		}
		return n, nil
	}
	// A bare fraction ("1.5") would be truncated by humanize; bytes are whole.
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, errors.New("a plain byte count must be a whole number")
	}
	num, unit := splitNumber(s)
	if num == "" {
		return 0, errors.New("a size starts with a number")
	}
	n, err := humanize.ParseBytes(s)
	if err != nil {
		// humanize's own words name its parser ("strconv.ParseFloat:
		// parsing ..."): say which part is wrong instead.
		if _, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64); err != nil {
			return 0, fmt.Errorf("%q is not a number", num)
		}
		if _, err := humanize.ParseBytes("1" + unit); err != nil {
			return 0, fmt.Errorf("unknown unit %q: the units are %s", unit, sizeUnitList)
		}
		return 0, errTooLarge
	}
	if n > math.MaxInt64 {
		return 0, errTooLarge
	}
	return n, nil
}

var errTooLarge = errors.New("too large: a size is at most 8 EiB")

// sizeUnits are the units ParseSize reads, as they are written (case does
// not matter to it; K, M, G... alone are the decimal units).
var sizeUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "kB", "MB", "GB", "TB", "PB", "EB"}

var sizeUnitList = strings.Join(sizeUnits, ", ")

// nearestUnit is the size unit nearest to unit, as it is written, or ""
// when none is close.
func nearestUnit(unit string) string {
	lower := make([]string, len(sizeUnits))
	for i, u := range sizeUnits {
		lower[i] = strings.ToLower(u)
	}
	n := nearest(unit, lower, nil)
	if i := slices.Index(lower, n); i >= 0 {
		return sizeUnits[i]
	}
	return ""
}

// splitNumber splits s, trimmed, into its leading number (digits, points
// and commas, as humanize reads them) and the rest, trimmed: "4", "GiB"
// for "4 GiB"; num is "" when s does not start with a digit.
func splitNumber(s string) (num, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == ',') })
	if i < 0 {
		i = len(s)
	}
	if i == 0 || strings.Trim(s[:i], ".,") == "" {
		return "", s
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// The pacer's settings (GOCUDA_GC_PERCENT); gcpressure has the same
// values, which a test keeps equal.
const (
	DefaultGCPercent = 100
	GCPercentOff     = -1
	MaxGCPercent     = 10000
)

// GCPercentForms is what GOCUDA_GC_PERCENT accepts.
const GCPercentForms = "a whole number from 1 to 10000 (100, the default, collects when device memory in use reaches twice the live set, as GOGC=100), or off for no pacer"

// ParseGCPercent parses GOCUDA_GC_PERCENT: a whole number from 1 to
// MaxGCPercent, or off (GCPercentOff). 0 is an error rather than GOGC's
// "collect continuously": a target equal to the live set would collect at
// every allocation, and for no pacer there is off.
func ParseGCPercent(v string) (int, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "off") {
		return GCPercentOff, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v, "%"))
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a whole number", v)
	case n == 0:
		return 0, errors.New(`0 would collect at every allocation: for no pacer write "off"`)
	case n < 0 || n > MaxGCPercent:
		return 0, fmt.Errorf("%d is outside 1 to %d", n, MaxGCPercent)
	}
	return n, nil
}

// IdleTrimForms is what GOCUDA_IDLE_TRIM accepts.
const IdleTrimForms = "a Go duration of at least " + minIdleTrim + " (30s, 5m), or off"

const minIdleTrim = "10ms"

// ParseIdleTrim parses GOCUDA_IDLE_TRIM: a duration (time.ParseDuration),
// or off, none or 0 for no idle trimming.
func ParseIdleTrim(v string) (time.Duration, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "none", "0":
		return 0, nil
	}
	d, err := parseDuration(v)
	if err != nil {
		return 0, err
	}
	if min, _ := time.ParseDuration(minIdleTrim); d < min {
		return 0, fmt.Errorf("%v is shorter than %s: the pool would be trimmed while in use", d, minIdleTrim)
	}
	return d, nil
}

// DefaultRendezvousTimeout is GOCUDA_RENDEZVOUS_TIMEOUT's default: long
// enough for every rank of a large job to be scheduled and start, short
// enough that a rank that never comes is reported while someone watches.
const DefaultRendezvousTimeout = 2 * time.Minute

// RendezvousTimeoutForms is what GOCUDA_RENDEZVOUS_TIMEOUT accepts.
const RendezvousTimeoutForms = "a Go duration of at least " + minRendezvousTimeout + " (90s, 10m; 2m is the default)"

const minRendezvousTimeout = "100ms"

// ParseRendezvousTimeout parses GOCUDA_RENDEZVOUS_TIMEOUT: a duration
// (time.ParseDuration) of at least 100ms. There is no off: a rank that
// never comes would hold every other rank forever.
func ParseRendezvousTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "off", "none", "0", "inf", "infinite":
		return 0, fmt.Errorf("%q: the wait cannot be unbounded, since a rank that never comes would hold the others forever: give a duration such as 30m", v)
	}
	d, err := parseDuration(v)
	if err != nil {
		return 0, err
	}
	if min, _ := time.ParseDuration(minRendezvousTimeout); d < min {
		return 0, fmt.Errorf("%v is shorter than %s: the ranks could not even connect", d, minRendezvousTimeout)
	}
	return d, nil
}

// parseDuration is time.ParseDuration with errors in plain words: the
// time package's ("time: missing unit in duration") name the parser.
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err == nil {
		return d, nil
	}
	if num, unit := splitNumber(v); num != "" && unit == "" {
		return 0, errors.New("a number needs a unit: ns, us, ms, s, m or h")
	}
	return 0, errors.New("a duration is a number and a unit, as in 300ms, 30s, 5m or 1h30m")
}

// KernelCacheForms is what GOCUDA_KERNEL_CACHE accepts.
const KernelCacheForms = "an absolute folder path, or off"

// ParseKernelCache parses GOCUDA_KERNEL_CACHE: an absolute folder (made
// on first use), or off or none for no disk cache ("").
func ParseKernelCache(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "off", "none":
		return "", nil
	}
	if !filepath.IsAbs(v) {
		// A relative folder would move with the working directory.
		return "", fmt.Errorf("%q is not an absolute path", v)
	}
	return filepath.Clean(v), nil
}

// DefaultKernelCache is the kernel cache folder when GOCUDA_KERNEL_CACHE is
// unset: gocuda/kernels under os.UserCacheDir (~/.cache on Linux), or ""
// (no disk cache) where the system names no cache folder.
func DefaultKernelCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "gocuda", "kernels")
}
