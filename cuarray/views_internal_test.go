package cuarray

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestArrayStaysInItsSizeClass: the strides of views live behind the one
// extra pointer, so that an Array is still 96 bytes (a size class of its
// own; 104 would round up to 112).
func TestArrayStaysInItsSizeClass(t *testing.T) {
	assert.Equal(t, uintptr(96), unsafe.Sizeof(Array[float32]{}))
	assert.Equal(t, uintptr(96), unsafe.Sizeof(Array[complex64]{}))
}
