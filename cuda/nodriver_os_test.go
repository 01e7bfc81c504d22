//go:build cgo && !(linux || darwin || freebsd)

package cuda_test

// noDriverText is what the ErrNoDriver error of a cgo build for an OS
// without the binding says.
const noDriverText = "binding supports linux, darwin and freebsd, not"
