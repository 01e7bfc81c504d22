package nvrtc

import (
	"regexp"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
)

// library is NVRTC as package libload looks for it: GOCUDA_NVRTC_LIBRARY's
// file alone when set; else libnvrtc.so.13, .12 and libnvrtc.so (those no
// newer than the driver: a newer NVRTC's PTX and cubins name a version the
// driver does not know, and fail to load), the toolkit's folders, and the
// folders of NVRTC's Python wheels: nvidia-cuda-nvrtc-cu12 in
// nvidia/cuda_nvrtc/lib, CUDA 13's nvidia-cuda-nvrtc in nvidia/cu13/lib.
var library = libload.Library{
	Pkg: "nvrtc", Name: "NVRTC", Knob: config.EnvNVRTCLibrary,
	Sonames: []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
	// libnvrtc.so, libnvrtc.so.13, libnvrtc.so.13.0.48; not
	// libnvrtc-builtins.so.13 (NVRTC's own helper) nor libnvrtc.alt.so.
	File:          regexp.MustCompile(`^libnvrtc\.so(\.[0-9]+)*$`),
	WheelDirs:     []string{"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
	Toolkit:       true,
	CUDAVersioned: true,
	Need:          "NVRTC from CUDA 11.2 or newer",
	Install:       "CUDA's NVRTC (the cuda-nvrtc package of the toolkit, or pip's nvidia-cuda-nvrtc)",
	Sentinel:      ErrNoNVRTC,
}

var lib struct {
	once sync.Once
	path string
	err  error
}

// load opens NVRTC once per process and resolves its entry points; the
// result is kept.
func load() error {
	lib.once.Do(func() {
		h, name, err := library.Search().Open()
		if err != nil {
			lib.err = err
			return
		}
		if lib.err = library.Installed(name, cInstall(h)); lib.err != nil {
			return
		}
		lib.path = name
	})
	return lib.err
}

// Library is the NVRTC library loaded (a soname such as "libnvrtc.so.13",
// or the path of the file found), loading it on first use, or the error
// that loading gave: one wrapping ErrNoNVRTC when there is none.
func Library() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return lib.path, nil
}
