//go:build !cgo || !linux

package libloadtest

// Without cgo nothing opens, so none of these is reached; they keep the
// tests compiling.

func Install(h uintptr) string { return "dlopen" }
func Cos(x float64) float64    { return 0 }
func HasOptional() bool        { return false }
