package optable_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/kernels/internal/optable"
)

// root is the module root, three directories up from this package.
var root = filepath.Join("..", "..", "..")

// The committed generated files are what the table gives now: a change to
// the table without `go generate ./kernels` fails here (and in CI).
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	files, err := optable.Generate()
	require.NoError(t, err)
	require.Len(t, files, 5)
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		require.NoError(t, err, "%s is missing: run go generate ./kernels", path)
		assert.True(t, string(got) == string(want), "%s differs from what the table generates: run go generate ./kernels", path)
	}
}

func TestGeneratedFilesSayTheyAreGenerated(t *testing.T) {
	files, err := optable.Generate()
	require.NoError(t, err)
	for path, b := range files {
		first, _, _ := strings.Cut(string(b), "\n")
		assert.Contains(t, first, "Code generated", path)
		assert.Contains(t, first, "DO NOT EDIT.", path)
	}
}

// Every kernel the Go side launches is defined by the generated CUDA, and
// the generated Go lists exactly KernelNames.
func TestKernelNamesAgreeAcrossLanguages(t *testing.T) {
	files, err := optable.Generate()
	require.NoError(t, err)
	cuda, goSrc := string(files[optable.CUDAFile]), string(files[optable.KernelFile])
	names := optable.KernelNames()
	require.NotEmpty(t, names)
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "kernel %s twice", n)
		seen[n] = true
		assert.True(t, strings.Contains(cuda, "KERNEL "+n+"("), "the CUDA lacks %s", n)
		assert.True(t, strings.Contains(goSrc, `"`+n+`"`), "the Go lacks %s", n)
		assert.True(t, strings.Contains(string(files[optable.EmuFile]), ", "+n), "the emulator does not check %s", n)
	}
	assert.Equal(t, len(names), strings.Count(cuda, "KERNEL "), "the CUDA defines kernels that KernelNames lacks")
}

func TestCheckRejectsBadEntries(t *testing.T) {
	saved := optable.Ops
	t.Cleanup(func() { optable.Ops = saved })
	cases := []struct {
		name string
		op   optable.Op
		want string
	}{
		{"unknown type", optable.Op{Name: "X", Kernel: "x", Doc: "x", Names: "x", Impls: []optable.Impl{{Types: "f8", C: "x", Go: "x"}}}, `unknown type "f8"`},
		{"half type listed", optable.Op{Name: "X", Kernel: "x", Doc: "x", Names: "x", Impls: []optable.Impl{{Types: "bf16", C: "x", Go: "x"}}}, `bfloat16 takes float32's body`},
		{"two bodies", optable.Op{Name: "X", Kernel: "x", Doc: "x", Names: "x", Impls: []optable.Impl{{Types: "f32", C: "x", Go: "x"}, {Types: "f32", C: "x", Go: "x"}}}, "two bodies for f32"},
		{"no Go body", optable.Op{Name: "X", Kernel: "x", Doc: "x", Names: "x", Impls: []optable.Impl{{Types: "f32", C: "x"}}}, "no C or no Go"},
		{"taken name", optable.Op{Name: "Exp", Kernel: "x", Doc: "x", Names: "x", Impls: []optable.Impl{{Types: "f32", C: "x", Go: "x"}}}, "is taken"},
		{"bool clamp", optable.Op{Name: "X", Kernel: "x", Kind: optable.Clamp, Doc: "x", Names: "x", Impls: []optable.Impl{{Types: "b8", C: "x", Go: "x"}}}, "real type"},
		{"no type", optable.Op{Name: "X", Kernel: "x", Doc: "x", Names: "x"}, "takes no type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			optable.Ops = append(append([]optable.Op(nil), saved...), c.op)
			err := optable.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestConvertRules(t *testing.T) {
	ty := func(s string) optable.Type {
		tt, ok := optable.TypeOf(s)
		require.True(t, ok)
		return tt
	}
	cases := []struct{ from, to, c, g string }{
		{"f32", "i32", "sat_i32((double)x)", "satI32(float64(x))"},
		{"i64", "i32", "(int)x", "int32(x)"},
		{"f64", "b8", "(x != 0)", "x != 0"},
		{"b8", "f32", "(float)x", "float32(b2u8(x))"},
		{"c64", "u8", "sat_u8((double)x.re)", "satU8(float64(real(x)))"},
		{"u8", "c64", "c64{(float)x, 0.0f}", "complex(float32(x), 0)"},
		{"c64", "b8", "(x.re != 0 || x.im != 0)", "x != 0"},
		{"i32", "i32", "x", "x"},
	}
	for _, c := range cases {
		gotC, gotGo := optable.Convert(ty(c.from), ty(c.to))
		assert.Equal(t, c.c, gotC, "%s → %s", c.from, c.to)
		assert.Equal(t, c.g, gotGo, "%s → %s", c.from, c.to)
	}
}
