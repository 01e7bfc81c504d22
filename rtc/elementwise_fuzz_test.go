package rtc_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/rtc"
)

// FuzzElementwiseParams: the parameter-list parser never panics; what it
// accepts is Go types and C identifiers that survive a round trip through
// the canonical form; what it rejects is an ErrInvalidValue that names
// the list.
func FuzzElementwiseParams(f *testing.F) {
	for _, seed := range [][2]string{
		{"float32 a, float32 x, float32 y", "float32 z"},
		{"", "int64 z"},
		{" uint8\tm ,\nint32 c", "float64 z, int64 w"},
		{"float x", "float32 z"},
		{"raw float32 x", "T z"},
		{"float32 x,", "float32 z"},
		{"float32 _x, float32 i", "float32 x"},
		{"float32 x, float32 x", "float32 \u00e9"},
	} {
		f.Add(seed[0], seed[1])
	}
	item := regexp.MustCompile(`^(float32|float64|int32|int64|uint8) [A-Za-z][A-Za-z0-9_]*$`)
	f.Fuzz(func(t *testing.T, in, out string) {
		k, err := rtc.NewElementwiseKernel("k", in, out, "z = 0")
		if err != nil {
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), "NewElementwiseKernel(k)")
			return
		}
		cin, cout := rtc.ElementwiseParams(k)
		require.NotEmpty(t, cout, "accepted without outputs")
		for _, list := range []string{cin, cout} {
			if list == "" {
				continue
			}
			for _, p := range strings.Split(list, ", ") {
				assert.Regexp(t, item, p)
			}
		}
		// The canonical form is the same lists, normalized.
		assert.Equal(t, strings.Join(strings.Fields(strings.ReplaceAll(in, ",", " ")), " "),
			strings.Join(strings.Fields(strings.ReplaceAll(cin, ",", " ")), " "))
		k2, err := rtc.NewElementwiseKernel("k", cin, cout, "z = 0")
		require.NoError(t, err, "the canonical form %q -> %q does not parse", cin, cout)
		assert.Equal(t, k.String(), k2.String())
	})
}
