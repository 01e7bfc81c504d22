//go:build !cgo || !linux

package libload

// Available says libraries can be loaded: not without cgo, nor outside
// Linux (no binding of the loader there).
func Available() bool { return false }

func open(name string) (uintptr, string) { return 0, "built without cgo" }

// cStages are Stage's own numbers: without cgo there is no C side to
// disagree with them.
func cStages() []Stage {
	return []Stage{StageOK, StageContext, StageStream, StageCall, StageRestore, StageOwn}
}
