//go:build cgo && (linux || darwin || freebsd)

package cuda_test

import "runtime"

// noDriverText is what the ErrNoDriver error of a build with the binding
// names: the library it failed to open.
var noDriverText = map[bool]string{true: "libcuda.dylib", false: "libcuda.so.1"}[runtime.GOOS == "darwin"]
