package libload_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/internal/libload"
	"github.com/gocuda/gocuda/internal/libload/libloadtest"
)

var errNoLib = errors.New("no libfake")

// fake is a CUDA-versioned library with two wheel layouts, as cuBLAS and
// NVRTC have.
var fake = libload.Library{
	Pkg: "fake", Name: "Fake", Knob: "GOCUDA_FAKE_LIBRARY",
	Sonames:       []string{"libfake.so.13", "libfake.so.12", "libfake.so"},
	File:          regexp.MustCompile(`^libfake\.so(\.[0-9]+)*$`),
	WheelDirs:     []string{"nvidia/cu13/lib", "nvidia/fake/lib"},
	Toolkit:       true,
	CUDAVersioned: true,
	Install:       "the fake package",
	HostBackend:   true,
	Sentinel:      errNoLib,
}

// inRoot keeps the candidates under root, relative to it.
func inRoot(root string, cands []string) []string {
	var out []string
	for _, c := range cands {
		if rest, ok := strings.CutPrefix(c, root+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

func TestCandidatesComeNewestFirstFromTheWheels(t *testing.T) {
	root := t.TempDir()
	cu13 := "python3.12/site-packages/nvidia/cu13/lib/"
	cu12 := "python3.11/dist-packages/nvidia/fake/lib/"
	old := "python3.10/site-packages/nvidia/fake/lib/"
	libloadtest.Tree(t, root,
		cu13+"libfake.so.13.0.48", cu13+"libfake.so.13", cu13+"libfakeLt.so.13", cu13+"libfake-builtins.so.13", cu13+"libfake.alt.so.13",
		cu12+"libfake.so.12", cu12+"libfake.so",
		old+"libfake.so.11",
		"python3.12/site-packages/nvidia/other/lib/libfake.so.13", // not a folder of its wheels
	)
	for _, tc := range []struct {
		name   string
		driver int
		names  []string
		files  []string
	}{
		// site-packages before dist-packages, the newest python3.N
		// first in each; in a folder the newest major version first, the
		// soname link before the full version.
		{"driver unknown: everything", 0, fake.Sonames,
			[]string{cu13 + "libfake.so.13", cu13 + "libfake.so.13.0.48", old + "libfake.so.11", cu12 + "libfake.so.12", cu12 + "libfake.so"}},
		{"CUDA 13 driver", 13, fake.Sonames,
			[]string{cu13 + "libfake.so.13", cu13 + "libfake.so.13.0.48", old + "libfake.so.11", cu12 + "libfake.so.12", cu12 + "libfake.so"}},
		{"CUDA 12 driver: no 13", 12, []string{"libfake.so.12", "libfake.so"},
			[]string{old + "libfake.so.11", cu12 + "libfake.so.12", cu12 + "libfake.so"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fake.SearchIn("", tc.driver, []string{root})
			cands := s.Candidates()
			assert.Equal(t, tc.names, cands[:len(tc.names)], "the loader's own search comes first")
			assert.Equal(t, tc.files, inRoot(root, cands))
			assert.Contains(t, s.Patterns, filepath.Join(root, "python3.*/{site,dist}-packages/{nvidia/cu13/lib,nvidia/fake/lib}"))
			assert.Contains(t, s.Patterns, "/usr/local/cuda/lib64")
			assert.Contains(t, s.Patterns, "/usr/lib/python3/dist-packages/{nvidia/cu13/lib,nvidia/fake/lib}")
		})
	}
}

func TestOwnVersionsAreNotTheDriversAndToolkitIsOptional(t *testing.T) {
	root := t.TempDir()
	libloadtest.Tree(t, root, "python3.12/site-packages/nvidia/nccl/lib/libfake.so.2")
	l := fake
	l.CUDAVersioned, l.Toolkit = false, false
	l.Sonames, l.WheelDirs = []string{"libfake.so.2"}, []string{"nvidia/nccl/lib"}
	s := l.SearchIn("", 12, []string{root})
	assert.Equal(t, []string{"libfake.so.2", filepath.Join(root, "python3.12/site-packages/nvidia/nccl/lib/libfake.so.2")},
		s.Candidates()[:2], "NCCL's 2 is its own version, not CUDA's")
	assert.NotContains(t, s.Patterns, "/usr/local/cuda/lib64")
}

func TestKnobIsTriedAlone(t *testing.T) {
	s := fake.SearchIn("  /opt/x/libfake.so.13 ", 12, []string{t.TempDir()})
	assert.Equal(t, []string{"/opt/x/libfake.so.13"}, s.Candidates())
}

func TestFailureNamesEveryFileAndFolder(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, "python3.12/site-packages/nvidia/cu13/lib/libfake.so.13")
	libloadtest.Tree(t, root, "python3.12/site-packages/nvidia/cu13/lib/libfake.so.13")
	s := fake.SearchIn("", 0, []string{root})
	// Only the fake tree is tried, whatever the machine has installed.
	s.Dirs = slices.DeleteFunc(s.Dirs, func(d string) bool { return !strings.HasPrefix(d, root) })
	_, _, err := s.Open()
	require.ErrorIs(t, err, errNoLib)
	msg := err.Error()
	assert.Contains(t, msg, "GOCUDA_BACKEND=host")
	if !libload.Available() {
		assert.Contains(t, msg, "fake: Fake cannot be loaded: this program was built with CGO_ENABLED=0")
		return
	}
	for _, want := range []string{
		"fake: no Fake library could be loaded; tried libfake.so.13 (",
		", libfake.so (",
		", " + lib + " (", // the fake wheel's file, with the loader's reason
		"found no libfake.so* in /usr/local/cuda/lib64, ",
		filepath.Join(root, "python3.*/{site,dist}-packages/{nvidia/cu13/lib,nvidia/fake/lib}"),
		"Install the fake package, put its folder on LD_LIBRARY_PATH, or name the file with GOCUDA_FAKE_LIBRARY",
	} {
		assert.Contains(t, msg, want)
	}

	_, _, err = fake.SearchIn(lib, 0, nil).Open()
	require.ErrorIs(t, err, errNoLib)
	assert.Contains(t, err.Error(), `fake: GOCUDA_FAKE_LIBRARY="`+lib+`" cannot be loaded: `+lib+" (")
	assert.Contains(t, err.Error(), "unset GOCUDA_FAKE_LIBRARY to search the usual places")
	assert.NotContains(t, err.Error(), "/usr/local/cuda", "nothing else tried")
}

func TestLoadsARealLibrary(t *testing.T) {
	if !libload.Available() {
		t.Skip("without cgo nothing is loaded")
	}
	// The C library is on every Linux machine that runs cgo programs.
	libc := fake
	libc.Sonames = []string{"libc.so.6"}
	h, name, err := libc.SearchIn("", 0, nil).Open()
	require.NoError(t, err)
	assert.NotZero(t, h)
	assert.Equal(t, "libc.so.6", name)
}

func TestInstalledSaysWhatIsMissing(t *testing.T) {
	l := fake
	l.Need = "Fake 2 or newer"
	assert.NoError(t, l.Installed("libfake.so.13", ""))
	err := l.Installed("libfake.so.13", "fakeCreate_v2")
	require.ErrorIs(t, err, errNoLib)
	assert.EqualError(t, err, "fake: libfake.so.13 does not export fakeCreate_v2; Fake 2 or newer is needed: no libfake")
	err = l.Installed("/x/libfake.so.13", "libcuda.so.1")
	require.ErrorIs(t, err, errNoLib)
	assert.Contains(t, err.Error(), "fake: /x/libfake.so.13 loaded, but the CUDA driver (libcuda.so.1) could not be opened")
}

func TestMajorOf(t *testing.T) {
	for name, want := range map[string]int{
		"libnvrtc.so.13.0.48": 13, "/a/b/libcublas.so.12": 12, "libcublas.so": 0, "libnccl.so.2": 2, "libfoo": 0,
	} {
		assert.Equal(t, want, libload.MajorOf(name), name)
	}
}

func TestPythonRootsPutTheActiveEnvironmentFirst(t *testing.T) {
	env := map[string]string{"VIRTUAL_ENV": "/v", "CONDA_PREFIX": "/c", "HOME": "/h"}
	roots := libload.PythonRoots(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	assert.Equal(t, []string{"/v/lib", "/c/lib", "/h/.local/lib"}, roots[:3])
	assert.Contains(t, roots, "/usr/lib")
	assert.Equal(t, "/usr/local/lib", libload.PythonRoots(func(string) (string, bool) { return "", false })[0])
}
