//go:build !cgo

package cuda

// noBindingReason is why a build without cgo cannot reach the driver, and
// what fixes it: the driver is dlopen'd from C, and cgo is the only way in.
const noBindingReason = "this program was built without cgo (CGO_ENABLED=0), so it cannot load the CUDA driver: " +
	"rebuild with CGO_ENABLED=1 and a C compiler (gcc or clang; no CUDA toolkit is needed)"
