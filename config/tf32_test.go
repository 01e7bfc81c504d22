package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTF32KnobParsesAsASwitchAndDefaultsOff(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  bool
	}{
		{"on", true}, {"ON", true}, {"1", true}, {"true", true},
		{"off", false}, {"0", false}, {"no", false}, {" ", false},
	} {
		t.Run(tt.value, func(t *testing.T) {
			c, err := Parse(env(map[string]string{EnvTF32: tt.value}))
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.TF32)
			assert.Equal(t, tt.value, c.Set[EnvTF32], "raw value kept for doctor")
		})
	}
	c, err := Parse(env(nil))
	require.NoError(t, err)
	assert.False(t, c.TF32, "off unless asked for, as PyTorch's allow_tf32")
}

func TestTF32KnobRejectsOtherWordsNamingTheForms(t *testing.T) {
	c, err := Parse(env(map[string]string{EnvTF32: "fast"}))
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, []string{EnvTF32}, c.Invalid)
	assert.False(t, c.TF32, "a refused value leaves the default")
	assert.EqualError(t, err, `GOCUDA_TF32="fast" is not valid: accepted values are true, false, 1, 0, on, off, yes, no`)
	_, err = Parse(env(map[string]string{EnvTF32: "onn"}))
	assert.ErrorContains(t, err, `did you mean "on"?`)
}

func TestTF32KnobIsListedAndKnown(t *testing.T) {
	assert.Contains(t, Names(), EnvTF32)
	assert.Empty(t, UnknownSet([]string{"GOCUDA_TF32=on"}), "not reported as misspelt")
}
