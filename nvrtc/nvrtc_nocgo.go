//go:build !cgo || !linux

package nvrtc

// Without cgo there is no dlopen: loading NVRTC fails with ErrNoNVRTC (see
// libload.Search.Open), and these stand-ins only keep the package
// compiling. None of them is reachable once loading has failed.

const missingCall = 1000

func cInstall(lib uintptr) string     { return "dlopen" }
func cVersion() (major, minor, r int) { return 0, 0, missingCall }
func cSupportedArchs() ([]int, int)   { return nil, missingCall }

type cProgram uintptr

func cCreate(src, name string) (cProgram, int) { return 0, missingCall }
func (p cProgram) destroy()                    {}
func (p cProgram) compile(opts []string) int   { return missingCall }
func (p cProgram) log() ([]byte, int)          { return nil, missingCall }
func (p cProgram) ptx() ([]byte, int)          { return nil, missingCall }
func (p cProgram) cubin() ([]byte, int)        { return nil, missingCall }
