package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStreamCheckKnobParsesAsASwitch(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"1", true}, {"true", true}, {"ON", true}, {" yes ", true},
		{"0", false}, {"false", false}, {"off", false}, {"", false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			c, err := Parse(env(map[string]string{EnvStreamRace: tt.value}))
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.StreamCheck)
			assert.Equal(t, tt.value, c.Set[EnvStreamRace], "raw value kept for doctor")
		})
	}
	c, err := Parse(env(nil))
	require.NoError(t, err)
	assert.False(t, c.StreamCheck, "off unless asked for")
}

func TestStreamCheckKnobRejectsNonBooleansNamingTheForms(t *testing.T) {
	c, err := Parse(env(map[string]string{EnvStreamRace: "sometimes"}))
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, EnvStreamRace, e.Var)
	assert.Equal(t, []string{EnvStreamRace}, c.Invalid)
	assert.EqualError(t, err, `GOCUDA_STREAM_CHECK="sometimes" is not valid: accepted values are true, false, 1, 0, on, off, yes, no`)
}

func TestStreamCheckKnobIsListedAndKnown(t *testing.T) {
	assert.Contains(t, Names(), EnvStreamRace)
	assert.Equal(t, "GOCUDA_STREAM_CHECK", EnvStreamRace)
	assert.Empty(t, UnknownSet([]string{"GOCUDA_STREAM_CHECK=1"}), "not reported as misspelt")
}
