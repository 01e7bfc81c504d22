package importcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The budget of a program that imports only cuarray, on linux/amd64 with
// cgo (docs/imports.md has the figures before and after): the packages it
// links, the standard library's included, and its binary's size.
const (
	maxPackages    = 130
	maxBinaryBytes = 24 << 20
)

// presentation are the packages, and trees of packages, that the core must
// not import: they link a web server or a plotting library into every
// program, and expvar registers /debug/vars on http.DefaultServeMux at
// init.
var presentation = []string{"net/http", "expvar", "gonum.org/v1/plot"}

// core are the packages under the budget's rule: whatever a program that
// computes on arrays needs. Test helpers among them (pooltest,
// backendtest) import testify, and with it net/http, and are skipped.
var core = []string{"cuda", "backend", "pool", "gcpressure", "cuarray", "kernels", "blas", "nccl"}

const module = "github.com/gocuda/gocuda"

// goTool returns the go command, or skips the test where there is none.
func goTool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command (%v): the GPU machines have no toolchain; this runs where the tests are built", err)
	}
	return path
}

// goCmd runs the go command in this package's directory with env added to
// the environment, and returns its standard output.
func goCmd(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), stderr.String())
	return out
}

// budgetEnv is the platform the budget is stated for.
var budgetEnv = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1"}

// isPresentation reports whether pkg is one of presentation or inside one
// of their trees.
func isPresentation(pkg string) bool {
	for _, p := range presentation {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// presentationIn returns the packages of deps that are presentation.
func presentationIn(deps []string) []string {
	var bad []string
	for _, d := range deps {
		if isPresentation(d) {
			bad = append(bad, d)
		}
	}
	return bad
}

func TestIsPresentationMatchesThePackagesAndTheirTrees(t *testing.T) {
	for _, tc := range []struct {
		pkg  string
		want bool
	}{
		{"net/http", true},
		{"net/http/pprof", true},
		{"expvar", true},
		{"gonum.org/v1/plot", true},
		{"gonum.org/v1/plot/vg/vgsvg", true},
		{"net", false},
		{"net/url", false},
		{"gonum.org/v1/gonum/blas", false},
		{"gonum.org/v1/plotter", false},
		{"github.com/gocuda/gocuda/observe", false},
	} {
		assert.Equal(t, tc.want, isPresentation(tc.pkg), tc.pkg)
	}
}

type listed struct {
	ImportPath string
	Name       string
	Standard   bool
	Deps       []string
}

// list runs go list -json on patterns and decodes its stream of packages.
func list(t *testing.T, env []string, args ...string) []listed {
	t.Helper()
	out := goCmd(t, env, append([]string{"list", "-e", "-json=ImportPath,Name,Standard,Deps"}, args...)...)
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return pkgs
		}
		require.NoError(t, err, "go list's output")
		pkgs = append(pkgs, p)
	}
}

func TestOnlyCuarrayLinksWithinThePackageBudget(t *testing.T) {
	// The program's own package is not counted: the budget is what
	// gocuda brings in.
	deps := list(t, budgetEnv, "-deps", "./testdata/onlycuarray")
	var std, other []string
	for _, p := range deps {
		switch {
		case p.Name == "main":
		case p.Standard:
			std = append(std, p.ImportPath)
		default:
			other = append(other, p.ImportPath)
		}
	}
	require.Contains(t, other, module+"/cuarray", "the program imports cuarray")
	n := len(std) + len(other)
	t.Logf("a program importing only cuarray links %d packages: %d from the standard library, %d others", n, len(std), len(other))
	assert.LessOrEqual(t, n, maxPackages,
		"a program importing only cuarray links %d packages (%d standard, %d others), over the budget of %d (docs/imports.md); the others:\n%s",
		n, len(std), len(other), maxPackages, strings.Join(other, "\n"))
	assert.Empty(t, presentationIn(append(std, other...)), "cuarray brings in presentation")
}

func TestCorePackagesImportNoPresentation(t *testing.T) {
	var patterns []string
	for _, c := range core {
		patterns = append(patterns, module+"/"+c+"/...")
	}
	// Platforms differ by build tags: check where users build.
	for _, env := range [][]string{
		budgetEnv,
		{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"},
		{"GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0"},
	} {
		t.Run(strings.Join(env, ","), func(t *testing.T) {
			pkgs := list(t, env, patterns...)
			checked := 0
			for _, p := range pkgs {
				if p.Name == "main" || strings.HasSuffix(p.Name, "test") {
					continue // generators, and helpers for tests (pooltest)
				}
				checked++
				assert.Empty(t, presentationIn(p.Deps), "%s imports presentation", p.ImportPath)
			}
			assert.GreaterOrEqual(t, checked, len(core), "the patterns matched the core: %v", patterns)
		})
	}
}

// build builds the program in testdata/name into a temporary directory
// with env, skipping under -short: a cold build compiles every package.
func build(t *testing.T, name string, env ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a program: skipped under -short")
	}
	exe := filepath.Join(t.TempDir(), name)
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	goCmd(t, env, "build", "-o", exe, "./testdata/"+name)
	return exe
}

func TestOnlyCuarrayBuildsWithinTheSizeBudget(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the size budget is for linux/amd64 with cgo; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	// The embedded kernels are most of the binary. Reading them here makes
	// go test's cache depend on them: the build below is another process,
	// whose reads the cache does not see, so a cached pass would outlive a
	// regenerated, larger PTX.
	pieces, err := filepath.Glob("../../kernels/ptx/kernels.fatbin.*.gz")
	require.NoError(t, err)
	require.NotEmpty(t, pieces, "the fatbin's pieces")
	for _, f := range append([]string{"../../kernels/ptx/kernels.ptx.gz"}, pieces...) {
		_, err := os.ReadFile(f)
		require.NoError(t, err)
	}
	exe := build(t, "onlycuarray", budgetEnv...)
	fi, err := os.Stat(exe)
	require.NoError(t, err)
	t.Logf("a program importing only cuarray builds to %d bytes (%.2f MiB)", fi.Size(), float64(fi.Size())/(1<<20))
	assert.LessOrEqual(t, fi.Size(), int64(maxBinaryBytes),
		"%.2f MiB, over the budget of %.0f MiB (docs/imports.md)", float64(fi.Size())/(1<<20), float64(maxBinaryBytes)/(1<<20))
}

// report is testdata/sideeffects' JSON: the process after import and
// after using an array.
type report struct {
	Goroutines int               `json:"goroutines"`
	Expvars    []string          `json:"expvars"`
	Routes     map[string]string `json:"routes"`
}

func TestImportingCuarrayHasNoSideEffects(t *testing.T) {
	exe := build(t, "sideeffects")
	cmd := exec.Command(exe)
	// The host backend: this is about importing, and it needs no GPU.
	cmd.Env = append(os.Environ(), "GOCUDA_BACKEND=host")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "sideeffects:\n%s", stderr.String())
	var got map[string]report
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)

	imported, used := got["imported"], got["used"]
	assert.Equal(t, 1, imported.Goroutines, "goroutines running when main starts: only main's")
	for phase, r := range map[string]report{"after import": imported, "after using an array": used} {
		assert.Equal(t, []string{"cmdline", "memstats"}, r.Expvars, "%s: only expvar's own are published", phase)
		require.NotEmpty(t, r.Routes, phase)
		for path, pattern := range r.Routes {
			if path == "/debug/vars" {
				// The program imports expvar itself: that one is
				// expvar's, and shows that the probe sees registrations.
				assert.Contains(t, pattern, "/debug/vars", "%s: expvar's own handler", phase)
				continue
			}
			assert.Empty(t, pattern, "%s: http.DefaultServeMux routes %s to %q", phase, path, pattern)
		}
	}
}
