package nvrtc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
	"github.com/gocuda/gocuda/internal/libload/libloadtest"
)

// needNVRTC skips without NVRTC, saying why, except under
// GOCUDA_BACKEND=cuda: a GPU machine is expected to have it, and a search
// that misses it there is a bug to see.
func needNVRTC(t testing.TB) {
	t.Helper()
	if _, err := Library(); err != nil {
		require.ErrorIs(t, err, ErrNoNVRTC)
		if os.Getenv(config.EnvBackend) == "cuda" {
			t.Fatalf("GOCUDA_BACKEND=cuda but NVRTC cannot be loaded: %v", err)
		}
		t.Skipf("no NVRTC: %v", err)
	}
}

const saxpy = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
		y[i] = a * x[i] + y[i];
}
`

func TestCompileMakesPTXAndCubin(t *testing.T) {
	needNVRTC(t)
	major, minor, err := Version()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, major, 11)
	name, _ := Library()
	t.Logf("%s: NVRTC %d.%d", name, major, minor)

	res, err := Compile(saxpy, "saxpy.cu")
	require.NoError(t, err)
	assert.False(t, res.Cubin)
	assert.Contains(t, string(res.Image), ".entry saxpy", "PTX of the extern \"C\" kernel")
	assert.NotContains(t, string(res.Image), "\x00", "PTX without its NUL")

	archs, err := SupportedArchs()
	require.NoError(t, err)
	require.NotEmpty(t, archs)
	t.Logf("architectures: %v", archs)
	sm := archs[len(archs)-1]
	res, err = Compile(saxpy, "saxpy.cu", "-arch=sm_"+strconv.Itoa(sm))
	require.NoError(t, err)
	assert.True(t, res.Cubin, "a real architecture gives a cubin")
	assert.True(t, bytes.HasPrefix(res.Image, []byte("\x7fELF")), "a cubin is an ELF file")
}

func TestCompileSuccessKeepsWarnings(t *testing.T) {
	needNVRTC(t)
	res, err := Compile("#warning gocuda-marker\n"+saxpy, "warn.cu")
	require.NoError(t, err)
	assert.Contains(t, res.Log, "gocuda-marker", "a warning of a program that compiled is in the log")
}

func TestCompileErrorsCarryTheLog(t *testing.T) {
	needNVRTC(t)
	tests := []struct {
		name, src string
		opts      []string
		status    Status
		stage     string
		log       string
	}{
		{"syntax error", "extern \"C\" __global__ void k(float *x) {\n\tx[0] = ;\n}\n", nil, StatusCompilation, "nvrtcCompileProgram", "bad.cu(2)"},
		{"unknown identifier", "extern \"C\" __global__ void k(float *x) { x[0] = nosuch; }\n", nil, StatusCompilation, "nvrtcCompileProgram", "nosuch"},
		{"bad option", saxpy, []string{"--no-such-option"}, StatusInvalidOption, "nvrtcCompileProgram", ""},
		{"unknown architecture", saxpy, []string{"-arch=sm_1"}, StatusInvalidOption, "nvrtcCompileProgram", ""},
		{"NUL in the source", "a\x00b", nil, StatusInvalidInput, "nvrtcCreateProgram", "NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.src, "bad.cu", tc.opts...)
			var ce *CompileError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, tc.status)
			assert.Equal(t, tc.stage, ce.Stage)
			assert.Equal(t, "bad.cu", ce.Name)
			assert.Contains(t, ce.Log, tc.log)
			assert.Contains(t, err.Error(), "nvrtc: compiling bad.cu")
			t.Logf("%v", err)
		})
	}
}

func TestCompileErrorText(t *testing.T) {
	e := &CompileError{Name: "k.cu", Options: []string{"-arch=sm_90"}, Status: StatusCompilation, Stage: "nvrtcCompileProgram",
		Log: "k.cu(2): error: expected an expression\n\n1 error detected in the compilation of \"k.cu\".\n"}
	assert.Equal(t, "nvrtc: compiling k.cu with -arch=sm_90: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6):\n"+
		"k.cu(2): error: expected an expression\n\n1 error detected in the compilation of \"k.cu\".", e.Error())
	assert.ErrorIs(t, e, StatusCompilation)
	assert.NotErrorIs(t, e, StatusInvalidOption)
	assert.Equal(t, "nvrtcResult 99", Status(99).Error())
}

// fakeTree makes root/python3.X/{site,dist}-packages/<dir>/<files> as empty
// files: names the loader finds and fails to load.
// NVRTC's search covers both wheel layouts and the toolkit, skips
// NVRTC's helper library, and names the knob; libload's own tests hold
// the search's order and its errors.
func TestSearchFindsNVRTCsWheels(t *testing.T) {
	root := t.TempDir()
	cu13 := "python3.12/site-packages/nvidia/cu13/lib/"
	cu12 := "python3.11/dist-packages/nvidia/cuda_nvrtc/lib/"
	libloadtest.Tree(t, root,
		cu13+"libnvrtc.so.13", cu13+"libnvrtc-builtins.so.13", cu13+"libnvrtc.alt.so.13",
		cu12+"libnvrtc.so.12",
		"python3.12/site-packages/nvidia/cublas/lib/libnvrtc.so.13", // not a folder NVRTC's wheels use
	)
	s := library.SearchIn("", 12, []string{root})
	var found []string
	for _, c := range s.Candidates() {
		if rest, ok := strings.CutPrefix(c, root+"/"); ok {
			found = append(found, rest)
		}
	}
	assert.Equal(t, []string{cu12 + "libnvrtc.so.12"}, found, "NVRTC 13 is not tried with a CUDA 12 driver")
	s = library.SearchIn("", 13, []string{root})
	assert.Equal(t, []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, s.Candidates()[:3])
	assert.Contains(t, s.Candidates(), filepath.Join(root, cu13+"libnvrtc.so.13"))
	assert.Contains(t, s.Patterns, "/usr/local/cuda/lib64")

	_, _, err := library.SearchIn(filepath.Join(root, cu13+"libnvrtc.so.13"), 13, nil).Open()
	require.ErrorIs(t, err, ErrNoNVRTC)
	if libload.Available() {
		assert.Contains(t, err.Error(), "nvrtc: GOCUDA_NVRTC_LIBRARY=")
	}
}

func TestKnobIsTheOnlyCandidate(t *testing.T) {
	t.Setenv(config.EnvNVRTCLibrary, " /opt/x/libnvrtc.so.13 ")
	assert.Equal(t, []string{"/opt/x/libnvrtc.so.13"}, library.Search().Candidates())
}

// TestWithoutNVRTCCallsSayWhy: where NVRTC is absent (CI), every call
// fails with the loader's message, not a crash.
func TestWithoutNVRTCCallsSayWhy(t *testing.T) {
	if _, err := Library(); err == nil {
		t.Skip("NVRTC is present")
	}
	_, err := Compile(saxpy, "saxpy.cu")
	require.ErrorIs(t, err, ErrNoNVRTC)
	_, _, err = Version()
	require.ErrorIs(t, err, ErrNoNVRTC)
	_, err = SupportedArchs()
	require.ErrorIs(t, err, ErrNoNVRTC)
	assert.False(t, errors.As(err, new(*CompileError)))
	t.Log(err)
}
