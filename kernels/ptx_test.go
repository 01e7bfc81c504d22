package kernels

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/cudabackend"
)

// The committed images must unpack: a corrupt one would read as empty and
// the tests below would skip instead of failing.
func TestEmbeddedImagesUnpack(t *testing.T) {
	for _, c := range []struct {
		name     string
		gz, want []byte
	}{{"kernels.ptx.gz", ptxGz, ptxImage()}, {"kernels.fatbin.*.gz", bytes.Join(fatbinParts(), nil), cubinImage()}} {
		require.NotEmpty(t, c.gz, "%s is not embedded", c.name)
		assert.Greater(t, len(c.want), len(c.gz), "%s did not unpack", c.name)
	}
	assert.Nil(t, gunzip([]byte("not gzip")), "an image that does not unpack reads as empty")
}

// gunzipParts gives the pieces' concatenation, or nothing when any piece
// does not unpack to the size its trailer gives.
func TestGunzipPartsJoinsThePiecesOrGivesNothing(t *testing.T) {
	pack := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, err := w.Write([]byte(s))
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	a, b, c := pack("the first piece, "), pack("the second, "), pack("and the last")
	truncated := a[:len(a)-9]                                           // part of its deflate stream and checksum gone
	corrupt := append(slices.Clone(b[:12]), make([]byte, len(b)-12)...) // the right size, the data zeroed
	for _, tc := range []struct {
		name  string
		parts [][]byte
		want  string
	}{
		{"three pieces", [][]byte{a, b, c}, "the first piece, the second, and the last"},
		{"one piece", [][]byte{c}, "and the last"},
		{"no pieces", nil, ""},
		{"an empty piece only", [][]byte{{}}, ""},
		{"a truncated piece", [][]byte{truncated, b, c}, ""},
		{"a corrupt piece", [][]byte{a, corrupt, c}, ""},
		{"not gzip", [][]byte{a, []byte("not gzip at all, but long enough")}, ""},
		{"too short to be gzip", [][]byte{a, []byte("short")}, ""},
		{"a trailer claiming more than deflate gives", [][]byte{append(slices.Clone(a[:len(a)-4]), 0xff, 0xff, 0xff, 0x7f)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(gunzipParts(tc.parts)))
		})
	}
}

// The embedded PTX must define every kernel the Go side looks up. While the
// placeholder is committed the test skips; once real PTX is there a missing
// name fails it.
func TestEmbeddedPTXHasEveryKernel(t *testing.T) {
	if isPlaceholder(ptxImage()) {
		t.Skip("kernels/ptx/kernels.ptx.gz is the placeholder: run scripts/gen-ptx.sh on a machine with nvcc")
	}
	text := string(ptxImage())
	assert.Contains(t, text, ".address_size 64")
	assert.Regexp(t, `(?m)^\.target\s+sm_80\b`, text, "the PTX should target compute_80 (see scripts/gen-ptx.sh)")
	entries := PTXEntries(ptxImage())
	var missing []string
	for _, name := range kernelNames() {
		if !slices.Contains(entries, name) {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "kernels the Go side uses but the embedded PTX lacks: regenerate it with scripts/gen-ptx.sh")
	// Extra gocuda_ entries are not an error, but worth seeing.
	for _, name := range entries {
		if !slices.Contains(kernelNames(), name) {
			t.Logf("the PTX defines %s, which the Go side does not use", name)
		}
	}
}

// The embedded fatbin (machine code for sm_80 and sm_90) must be a fatbin
// and hold every kernel the Go side looks up: one generated from an older
// kernels.cu than the PTX would lack the newer kernels' names.
func TestEmbeddedFatbinHasEveryKernel(t *testing.T) {
	if len(cubinImage()) == 0 {
		t.Skip("kernels/ptx/kernels.fatbin.*.gz are empty: run scripts/gen-ptx.sh on a machine with nvcc")
	}
	require.GreaterOrEqual(t, len(cubinImage()), 4)
	assert.Equal(t, []byte{0x50, 0xed, 0x55, 0xba}, cubinImage()[:4], "fatbin magic, 0xBA55ED50 little-endian")
	var missing []string
	for _, name := range kernelNames() {
		if !bytes.Contains(cubinImage(), []byte(name+"\x00")) {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "kernels the Go side uses but the embedded fatbin lacks: regenerate it with scripts/gen-ptx.sh")
}

// On a GPU the fatbin is loaded when it has code for it, and anything the
// driver cannot load as a fatbin leaves the PTX. It needs a GPU:
// GOCUDA_BACKEND=cuda.
func TestModuleLoadsTheFatbinOrFallsBackToThePTX(t *testing.T) {
	cu := cudaDevice(t)
	if isPlaceholder(ptxImage()) || len(cubinImage()) == 0 {
		t.Skip("the embedded PTX or fatbin is a placeholder")
	}
	ctx := cu.Context()
	for _, c := range []struct {
		name   string
		fatbin []byte
	}{
		{"the embedded fatbin", cubinImage()},
		{"no fatbin", nil},
		{"a fatbin the driver refuses", []byte("not a fatbin")},
	} {
		t.Run(c.name, func(t *testing.T) {
			mod, err := loadModule(ctx, c.fatbin, ptxImage)
			require.NoError(t, err)
			defer func() { assert.NoError(t, mod.Unload()) }()
			f, err := mod.Function(nameByID[kernelID(kAdd, Float32, 0)])
			require.NoError(t, err)
			assert.Equal(t, "gocuda_add_f32", f.Name())
		})
	}
}

func TestKernelNames(t *testing.T) {
	names := kernelNames()
	for _, want := range []string{
		"gocuda_fill_c64", "gocuda_add_f32", "gocuda_div_u8", "gocuda_muls_i64", "gocuda_axpy_c64",
		"gocuda_exp_f64", "gocuda_relugrad_f32", "gocuda_sum_c64_pass1", "gocuda_sum_c64_pass2",
		"gocuda_max_u8_pass2", "gocuda_dot_f32_pass1", "gocuda_sumrows_f64", "gocuda_spin",
	} {
		assert.Contains(t, names, want)
	}
	for _, notWanted := range []string{"gocuda_exp_i32", "gocuda_max_c64_pass1", "gocuda_axpy_u8"} {
		assert.NotContains(t, names, notWanted)
	}
	seen := map[int]string{}
	for k := kop(0); k < numKops; k++ {
		for dt := Float32; dt < numDTypes; dt++ {
			for p := range 2 {
				id := kernelID(k, dt, p)
				require.Less(t, id, spinID)
				require.NotContains(t, seen, id, "kernel IDs collide")
				seen[id] = kernelName(k, dt, p)
			}
		}
	}
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(names))), len(names), "kernel names repeat")
	for _, name := range names {
		assert.Contains(t, nameByID[:], name)
	}
	assert.Equal(t, spinKernel, nameByID[spinID])
}

func TestPTXParsing(t *testing.T) {
	ptx := []byte(`
.version 8.0
.target sm_80
.address_size 64

	// .globl	gocuda_fill_f32
.visible .entry gocuda_fill_f32(
	.param .u64 gocuda_fill_f32_param_0,
)
{
	ret;
}
.visible .entry gocuda_spin(
	.param .u64 gocuda_spin_param_0
)
.entry local_kernel(
`)
	assert.Equal(t, []string{"gocuda_fill_f32", "gocuda_spin", "local_kernel"}, PTXEntries(ptx))
	assert.False(t, isPlaceholder(ptx))
	assert.True(t, isPlaceholder([]byte("// gocuda-ptx-placeholder\n")))
	assert.True(t, isPlaceholder([]byte(".version 8.0\n.target sm_80\n")), "PTX without kernels")
}

// Without real PTX, loading fails with ErrNoPTX and the message says what
// to run, rather than the driver's complaint about the placeholder.
func TestPlaceholderGivesClearError(t *testing.T) {
	_, err := loadModule(nil, nil, func() []byte { return []byte("// gocuda-ptx-placeholder\n") })
	require.True(t, errors.Is(err, ErrNoPTX))
	assert.True(t, strings.Contains(err.Error(), "run scripts/gen-ptx.sh on a machine with nvcc"))
}

// BenchmarkModuleLoad times loading the kernels into a context from the
// fatbin and from the PTX. Run it with CUDA_CACHE_DISABLE=1 to see what a
// cold start costs: the driver then compiles the PTX every time.
func BenchmarkModuleLoad(b *testing.B) {
	cu := cudaDevice(b)
	if isPlaceholder(ptxImage()) || len(cubinImage()) == 0 {
		b.Skip("needs the generated PTX and fatbin")
	}
	for _, c := range []struct {
		name   string
		fatbin []byte
	}{{"fatbin", cubinImage()}, {"ptx", nil}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				mod, err := loadModule(cu.Context(), c.fatbin, ptxImage)
				require.NoError(b, err)
				require.NoError(b, mod.Unload())
			}
		})
	}
	// What a process's first kernel pays: the embedded images unpacked as
	// moduleFor unpacks them (the PTX only if the fatbin fails), then
	// loaded.
	b.Run("first use", func(b *testing.B) {
		for b.Loop() {
			mod, err := loadModule(cu.Context(), gunzipParts(fatbinParts()), func() []byte { return gunzip(ptxGz) })
			require.NoError(b, err)
			require.NoError(b, mod.Unload())
		}
	})
}

// BenchmarkUnpack times unpacking the embedded images and checking the PTX,
// the host's part of a process's first kernel (on any machine).
func BenchmarkUnpack(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"fatbin", func() { gunzipParts(fatbinParts()) }},
		{"ptx", func() { gunzip(ptxGz) }},
		{"isPlaceholder of the ptx", func() { isPlaceholder(ptxImage()) }},
		// The anchors: what the first kernel did before 2026-11-26 (an
		// io.ReadAll of each image, the fatbin one stream, PTXEntries of
		// the PTX). The pieces concatenated are one valid gzip stream.
		{"fatbin as one stream by io.ReadAll", func() { readAllGunzip(bytes.Join(fatbinParts(), nil)) }},
		{"ptx by io.ReadAll", func() { readAllGunzip(ptxGz) }},
		{"PTXEntries of the ptx", func() { PTXEntries(ptxImage()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.fn()
			}
		})
	}
}

// cudaDevice is device 0 of the process's backend when that is the CUDA
// backend; otherwise the test skips (GOCUDA_BACKEND=cuda runs it on a GPU).
func cudaDevice(t testing.TB) *cudabackend.Device {
	t.Helper()
	b, err := auto.Default()
	require.NoError(t, err)
	dev, err := b.Device(0)
	require.NoError(t, err)
	cu, ok := dev.(*cudabackend.Device)
	if !ok {
		t.Skip("needs the CUDA backend (GOCUDA_BACKEND=cuda): the host backend loads no module")
	}
	return cu
}

// readAllGunzip is gunzip as it was: io.ReadAll, whose buffer doubles.
func readAllGunzip(b []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	out, _ := io.ReadAll(r)
	return out
}
