package sizeclass

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultTableIsAlignedIncreasingAndBounded(t *testing.T) {
	classes, err := Default.Classes()
	require.NoError(t, err)
	require.Len(t, classes, 128)
	assert.Equal(t, uint64(256), classes[0].Size)
	assert.Equal(t, Default.Max, classes[len(classes)-1].Size)
	for i, c := range classes {
		require.Zero(t, c.Size%Default.Alignment, "class %d", i)
		if i > 0 {
			require.Greater(t, c.Size, classes[i-1].Size, "class %d", i)
		}
		require.LessOrEqual(t, c.WastePct(), Default.Bound()+1e-9, "class %d", i)
		require.LessOrEqual(t, c.WasteOfRequestPct(), 12.5+1e-9, "class %d", i)
	}
}

func TestOtherSpacingsKeepTheirBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		bound float64
	}{
		{"4 per power of two", Config{Alignment: 256, StepShift: 2, Max: 1 << 28}, 20},
		{"16 per power of two", Config{Alignment: 512, StepShift: 4, Max: 1 << 26}, 100.0 / 17},
		{"powers of two only", Config{Alignment: 256, StepShift: 0, Max: 1 << 20}, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			classes, err := tc.cfg.Classes()
			require.NoError(t, err)
			assert.InDelta(t, tc.bound, tc.cfg.Bound(), 1e-9)
			for _, c := range classes {
				assert.LessOrEqual(t, c.WastePct(), tc.bound+1e-9)
			}
		})
	}
}

func TestBadConfigsAreErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"alignment not a power of two", Config{Alignment: 300, StepShift: 3, Max: 1 << 26}},
		{"max not a power of two", Config{Alignment: 256, StepShift: 3, Max: 3 << 20}},
		{"max below the geometric range", Config{Alignment: 256, StepShift: 3, Max: 1024}},
		{"step shift negative", Config{Alignment: 256, StepShift: -1, Max: 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.Classes()
			assert.Error(t, err)
		})
	}
}

func TestSourceParsesAndNamesItsPackage(t *testing.T) {
	src, err := Default.Source("binned")
	require.NoError(t, err)
	f, err := parser.ParseFile(token.NewFileSet(), "sizeclasses.go", src, parser.ParseComments)
	require.NoError(t, err)
	assert.Equal(t, "binned", f.Name.Name)
	assert.Contains(t, string(src), "DO NOT EDIT")
}
