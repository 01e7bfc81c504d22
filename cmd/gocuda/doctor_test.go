package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/nvml"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/nvrtc"
)

func TestDoctorShowsTheCallPath(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, doctor(&out, nil, false))
	assert.Contains(t, out.String(), "\n  call path: "+cuda.CallPath()+"\n")
}

func TestDoctorPrintsUUIDsAsNvidiaSmiDoes(t *testing.T) {
	u := cuda.UUID{0xde, 0xad, 0xbe, 0xef, 0xab, 0xcd, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0xff}
	for _, tc := range []struct {
		name string
		err  error
		mig  nvml.MIG
		want string
	}{
		{"a GPU", nil, nvml.MIG{}, "GPU-deadbeef-abcd-1234-5678-9abcdef001ff"},
		{"a GPU with MIG off", nil, nvml.MIG{Supported: true}, "GPU-deadbeef-abcd-1234-5678-9abcdef001ff"},
		{"a MIG instance", nil, nvml.MIG{Supported: true, Current: true}, "MIG-deadbeef-abcd-1234-5678-9abcdef001ff (a MIG instance)"},
		{"an old driver", errors.New("cuda: cuDeviceGetUuid_v2: missing"), nvml.MIG{}, "unknown: cuda: cuDeviceGetUuid_v2: missing"},
	} {
		assert.Equal(t, tc.want, uuidText(u, tc.err, tc.mig), tc.name)
	}
}

func TestDoctorSaysMIGModeAndWhatAResetChanges(t *testing.T) {
	for _, tc := range []struct {
		m    nvml.MIG
		err  error
		want string
	}{
		{nvml.MIG{}, nil, "not supported by this GPU"},
		{nvml.MIG{Supported: true}, nil, "disabled"},
		{nvml.MIG{Supported: true, Current: true, Pending: true}, nil, "enabled"},
		{nvml.MIG{Supported: true, Pending: true}, nil, "disabled, enabled after the next GPU reset"},
		{nvml.MIG{Supported: true, Current: true}, nil, "enabled, disabled after the next GPU reset"},
		{nvml.MIG{}, errors.New("nvml: nvmlInit_v2: Driver Not Loaded (9)"), "unknown: nvml: nvmlInit_v2: Driver Not Loaded (9)"},
	} {
		assert.Equal(t, tc.want, migText(tc.m, tc.err), "%+v %v", tc.m, tc.err)
	}
}

func TestDoctorSaysWhatEveryKnobParsedTo(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"GOCUDA_IDLE_TRIM=5m", "idle trim after 5m0s"},
		{"GOCUDA_IDLE_TRIM=off", "idle trim off"},
		{"GOCUDA_GC_EARLY=false", "early collection off"},
		{"GOCUDA_NCCL_LIBRARY=/opt/nccl/libnccl.so.2", "nccl library /opt/nccl/libnccl.so.2"},
		{"GOCUDA_NCCL_LIBRARY=", "nccl library searched for"},
		{"GOCUDA_CUBLAS_LIBRARY=/opt/cuda/libcublas.so.13", "cuBLAS from /opt/cuda/libcublas.so.13"},
		{"GOCUDA_CUBLAS_LIBRARY=", "cuBLAS searched for"},
		{"GOCUDA_CURAND_LIBRARY=/opt/cuda/libcurand.so.10", "cuRAND from /opt/cuda/libcurand.so.10"},
		{"GOCUDA_CUFFT_LIBRARY=/opt/cuda/libcufft.so.12", "cuFFT from /opt/cuda/libcufft.so.12"},
		{"GOCUDA_RENDEZVOUS_TIMEOUT=5m", "ranks wait 5m0s for each other"},
		{"GOCUDA_RENDEZVOUS_TIMEOUT=", "ranks wait 2m0s for each other"},
	} {
		var out bytes.Buffer
		require.NoError(t, doctor(&out, []string{tc.env}, false))
		assert.Contains(t, out.String(), tc.want, tc.env)
	}
	var out bytes.Buffer
	require.NoError(t, doctor(&out, nil, false))
	for _, name := range []string{"GOCUDA_IDLE_TRIM", "GOCUDA_STREAM_CHECK", "GOCUDA_MEMORY_POOL", "GOCUDA_RENDEZVOUS_TIMEOUT"} {
		assert.Regexp(t, name+` +\(unset\) +\S`, out.String(), "every knob's parsed value is shown")
	}
}

func TestDoctorReportsLibrariesBackendAndKnobs(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, doctor(&out, []string{"GOCUDA_MEMORY_POOL=split", "GOCUDA_HARD_MEMORY_LIMIT=4GiB", "GOCUDA_MEMORY_POL=x", "GOCUDA_XYZ=1"}, false))
	s := out.String()
	assert.Contains(t, s, "\nCUDA driver\n")
	for _, l := range libraries {
		assert.Contains(t, s, "\n"+l.name+" ("+l.use+")\n  ")
	}
	if os.Getenv(config.EnvBackend) == "cuda" {
		// The GPU machines have both: a search that misses them is a bug.
		assert.Regexp(t, `cuBLAS \(Gemm, MatMul and Gemv on the GPU\)\n  \S*libcublas\.so\S*, cuBLAS \d+\.\d+\.\d+\n`, s)
		assert.Regexp(t, `cuRAND \(Rand, Randn, FillRand and FillRandn on the GPU\)\n  \S*libcurand\.so\S*, cuRAND \d+\.\d+\.\d+\n`, s)
		assert.Regexp(t, `cuFFT \(package cufft's transforms on the GPU\)\n  \S*libcufft\.so\S*, cuFFT \d+\.\d+\.\d+\n`, s)
		assert.Regexp(t, `NCCL \(collectives across GPUs, package nccl\)\n  \S*libnccl\.so\S*, NCCL 2\.\d+\.\d+\n`, s)
	}
	assert.Contains(t, s, "\nBackend\n")
	assert.Regexp(t, `GOCUDA_MEMORY_POOL +"split" +pool split\n`, s)
	assert.Regexp(t, `GOCUDA_HARD_MEMORY_LIMIT +"4GiB" +hard limit 4\.0 GiB\n`, s)
	assert.Contains(t, s, "\n  GOCUDA_MEMORY_POL is set but gocuda has no such knob, so it has no effect; did you mean\n    GOCUDA_MEMORY_POOL?\n")
	assert.Contains(t, s, "\n  GOCUDA_XYZ is set but gocuda has no such knob, so it has no effect; the knobs are the ones above\n")
	assert.NotContains(t, s, "do not parse")
}

// With several bad knobs doctor flags each, shows none of them as if
// accepted, and says what a program does: its calls return the error.
func TestDoctorFlagsEveryBadKnobAndSaysWhatAProgramDoes(t *testing.T) {
	var out bytes.Buffer
	err := doctor(&out, []string{"GOCUDA_BACKEND=gpu", "GOCUDA_MEMORY_POOL=splti", "GOCUDA_IDLE_TRIM=5m"}, false)
	require.EqualError(t, err, "2 GOCUDA_ variables do not parse: GOCUDA_BACKEND, GOCUDA_MEMORY_POOL")
	s := out.String()
	assert.Regexp(t, `\n  GOCUDA_BACKEND +"gpu" +not valid: see below\n`, s)
	assert.Regexp(t, `\n  GOCUDA_MEMORY_POOL +"splti" +not valid: see below\n`, s)
	assert.Regexp(t, `\n  GOCUDA_IDLE_TRIM +"5m" +idle trim after 5m0s\n`, s, "the knobs that parse are shown parsed")
	assert.NotContains(t, s, "pool split", "a refused value is not shown as the default it fell back to")
	assert.NotContains(t, s, "backend auto")
	assert.NotContains(t, s, "stop at start-up", "programs do not stop: their calls fail")
	assert.Contains(t, s, `
Backend
  none: a program's first call that needs the backend or a pool (gocuda.Backend, gocuda.Pool, making
    an array) returns one error listing each knob below, and so does every such call after; nothing
    exits

Knobs (GOCUDA_*)
`)
	assert.True(t, strings.HasSuffix(s, `
2 GOCUDA_ variables do not parse:
  GOCUDA_BACKEND="gpu" is not valid: accepted values are auto, cuda, host; did you mean "cuda"?
  GOCUDA_MEMORY_POOL="splti" is not valid: accepted values are cuda, binned, split, simple, none
    (off is none); did you mean "split"?
`), s)

	// Through the command: exit 1, and one line on stderr. Package nccl
	// reads the knobs once per process: it reads them now, unset, so
	// that later tests do not find it refused.
	_, _ = nccl.Library()
	t.Setenv("GOCUDA_BACKEND", "gpu")
	t.Setenv("GOCUDA_MEMORY_POOL", "splti")
	code, _, stderr := runCLI(t, "doctor")
	assert.Equal(t, 1, code)
	assert.Equal(t, "gocuda doctor: 2 GOCUDA_ variables do not parse: GOCUDA_BACKEND, GOCUDA_MEMORY_POOL\n", stderr)
}

// A backend knob that parses, beside one that does not: doctor says what
// the backend would be once the other is fixed.
func TestDoctorSaysTheBackendTheKnobsWouldGiveOnceFixed(t *testing.T) {
	var out bytes.Buffer
	err := doctor(&out, []string{"GOCUDA_BACKEND=host", "GOCUDA_HARD_MEMORY_LIMIT=abc"}, false)
	require.EqualError(t, err, "1 GOCUDA_ variable does not parse: GOCUDA_HARD_MEMORY_LIMIT")
	s := out.String()
	assert.Contains(t, s, "\n  with the knobs fixed: host (GOCUDA_BACKEND=host)\n  devices: 2\n")
	assert.Contains(t, s, `
1 GOCUDA_ variable does not parse:
  GOCUDA_HARD_MEMORY_LIMIT="abc" is not valid: accepted values are a byte count ("4294967296"), a
    size with a unit ("4GiB", "12.5GB", "512 MiB"), a share of device memory ("80%"), or "none" or
    "off" for no limit (a size starts with a number)
`)
	assert.NotContains(t, s, "strconv")
}

// The host backend has two devices; doctor lists both.
func TestDoctorListsEveryHostDevice(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, doctor(&out, []string{"GOCUDA_BACKEND=host"}, false))
	b, _, err := auto.Choose("host")
	require.NoError(t, err)
	d, err := b.Device(0)
	require.NoError(t, err)
	in := d.Info()
	dev := fmt.Sprintf("host CPU, %s, %d CPUs", humanize.IBytes(in.TotalMemory), in.MultiProcessors)
	assert.Contains(t, out.String(), "\nBackend\n  host (GOCUDA_BACKEND=host)\n  devices: 2\n    0: "+dev+"\n    1: "+dev+"\n"+
		"  (the host backend offers 2 so that multi-device code runs without GPUs; they share this machine's\n"+
		"    memory and CPUs)\n")
}

// No line runs past the width, whatever the driver's error or the places
// a library was looked for; --verbose lists each place, one a line.
func TestDoctorLinesStayShort(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		var out bytes.Buffer
		require.NoError(t, doctor(&out, nil, verbose))
		for _, line := range strings.Split(out.String(), "\n") {
			assert.LessOrEqual(t, len(line), width, "verbose %v: %q", verbose, line)
		}
		_, err := nvrtc.Library()
		s, searched := parseSearch(err)
		if !searched {
			continue // found, or not looked for (no cgo)
		}
		if verbose {
			assert.Contains(t, out.String(), fmt.Sprintf("\n    found no libnvrtc.so* in these %d folders:\n", len(s.dirs)))
			for _, d := range s.dirs {
				assert.Contains(t, out.String(), "\n      "+d+"\n")
			}
		} else {
			assert.Contains(t, out.String(), fmt.Sprintf("\n    found no libnvrtc.so* in %d folders: %s,\n      %s and %d more (--verbose lists them)\n",
				len(s.dirs), s.dirs[0], s.dirs[1], len(s.dirs)-2))
		}
	}
}

// The error internal/libload words for a failed search, read back into
// its parts; any other error is left as it is.
func TestParseSearchReadsLibloadsError(t *testing.T) {
	msg := "blas: no cuBLAS library could be loaded; tried libcublas.so.13 (libcublas.so.13: cannot open shared object file: No such file or directory), " +
		"/opt/x/libcublas.so.12 (/opt/x/libcublas.so.12: wrong ELF class: ELFCLASS32), libcublas.so (libcublas.so: cannot open shared object file: No such file or directory); " +
		"found no libcublas.so* in /usr/local/cuda/lib64, /root/.local/lib/python3.*/{site,dist}-packages/{nvidia/cu13/lib,nvidia/cublas/lib}, /opt/x. " +
		"Install the CUDA toolkit's cuBLAS (libcublas: the cuda-libraries or libcublas package, or pip's nvidia-cublas-cu12), put its folder on LD_LIBRARY_PATH, " +
		"or name the file with GOCUDA_CUBLAS_LIBRARY, or use GOCUDA_BACKEND=host: cuBLAS not found"
	s, ok := parseSearch(errors.New(msg))
	require.True(t, ok)
	_, ok = parseSearch(nil) // a library that was found: version asks too
	assert.False(t, ok)
	assert.Equal(t, "cuBLAS", s.name)
	assert.Equal(t, "libcublas.so*", s.glob)
	assert.Equal(t, []string{"/usr/local/cuda/lib64", "/root/.local/lib/python3.*/{site,dist}-packages/{nvidia/cu13/lib,nvidia/cublas/lib}", "/opt/x"}, s.dirs)
	assert.Equal(t, "the CUDA toolkit's cuBLAS (libcublas: the cuda-libraries or libcublas package, or pip's nvidia-cublas-cu12), put its folder on "+
		"LD_LIBRARY_PATH, or name the file with GOCUDA_CUBLAS_LIBRARY, or use GOCUDA_BACKEND=host", s.install)
	assert.Equal(t, []string{
		"libcublas.so.13, libcublas.so: cannot open shared object file: No such file or directory",
		"/opt/x/libcublas.so.12: wrong ELF class: ELFCLASS32",
	}, s.triedByReason())

	for _, other := range []string{
		`blas: GOCUDA_CUBLAS_LIBRARY="/x.so" cannot be loaded: /x.so (no such file); name a cuBLAS library file (such as libcublas.so.13), or unset GOCUDA_CUBLAS_LIBRARY to search the usual places: cuBLAS not found`,
		"nccl: /usr/lib/libnccl.so.2 is NCCL 2.9.0; 2.14 or newer is needed: NCCL not found",
	} {
		_, ok := parseSearch(errors.New(other))
		assert.False(t, ok, other)
	}
}

func TestSayWrapsAtTheWidthIndentingWhatFollows(t *testing.T) {
	var out bytes.Buffer
	say(&out, 2, strings.Repeat("word ", 30)+strings.Repeat("x", 120))
	assert.Equal(t, "  "+strings.TrimSpace(strings.Repeat("word ", 19))+"\n"+
		"    "+strings.TrimSpace(strings.Repeat("word ", 11))+"\n"+
		"    "+strings.Repeat("x", 120)+"\n", out.String(), "a word longer than the width has a line of its own")
	out.Reset()
	say(&out, 4, "short")
	assert.Equal(t, "    short\n", out.String())
}

// Doctor says what each GPU generation does with each product type, and
// what GOCUDA_TF32 parsed to.
func TestDoctorSaysTensorCoresAndTF32(t *testing.T) {
	for _, tc := range []struct {
		major, minor int
		want         string
	}{
		{9, 0, "float16, bfloat16, TF32 (when GOCUDA_TF32=on)"},
		{8, 0, "float16, bfloat16, TF32 (when GOCUDA_TF32=on)"},
		{7, 5, "float16; no bfloat16 (refused) or TF32 (full float32)"},
		{6, 1, "none: float16 runs slower, no bfloat16 (refused) or TF32"},
	} {
		assert.Equal(t, tc.want, tensorCoresText(blas.TensorCoresOf(tc.major, tc.minor)), "%d.%d", tc.major, tc.minor)
	}
	for _, tc := range []struct{ env, want string }{
		{"GOCUDA_TF32=on", `GOCUDA_TF32 +"on" +TF32 on \(float32 products, compute capability 8\.0\+\)\n`},
		{"GOCUDA_TF32=", `GOCUDA_TF32 +"" +TF32 off: float32 products in full float32\n`},
	} {
		var out bytes.Buffer
		require.NoError(t, doctor(&out, []string{tc.env}, false))
		assert.Regexp(t, tc.want, out.String(), tc.env)
	}
	var out bytes.Buffer
	require.NoError(t, doctor(&out, nil, false))
	assert.Regexp(t, `GOCUDA_TF32 +\(unset\) +TF32 off: float32 products in full float32\n`, out.String(), "off by default")
}
