package cuarray

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoleNamesTheOperandOrItsIndex(t *testing.T) {
	for _, c := range []struct {
		names string
		i     int
		want  string
	}{
		{"dst,a,b", 0, "dst"},
		{"dst,a,b", 1, "a"},
		{"dst,a,b", 2, "b"},
		{"dst,a,b", 3, "operand 3"},
		{"x", 0, "x"},
		{"x", 1, "operand 1"},
		{"", 0, ""},
	} {
		assert.Equal(t, c.want, role(c.names, c.i), "role(%q, %d)", c.names, c.i)
	}
}

// The prechecks before a nil dst's result name every operand of every operation
// (issue 28: a small operation's path allocates nothing it can avoid).
func TestRoleOfANamedOperandAllocatesNothing(t *testing.T) {
	var r string
	allocs := testing.AllocsPerRun(100, func() { r = role("dst,a,b", 2) })
	assert.Zero(t, allocs)
	assert.Equal(t, "b", r)
}
