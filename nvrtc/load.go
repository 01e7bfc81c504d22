package nvrtc

import (
	"regexp"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
)

// library is NVRTC as package libload binds it: GOCUDA_NVRTC_LIBRARY's
// file alone when set; else libnvrtc.so.13, .12 and libnvrtc.so (those no
// newer than the driver: a newer NVRTC's PTX and cubins name a version the
// driver does not know, and fail to load), the toolkit's folders, and the
// folders of NVRTC's Python wheels: nvidia-cuda-nvrtc-cu12 in
// nvidia/cuda_nvrtc/lib, CUDA 13's nvidia-cuda-nvrtc in nvidia/cu13/lib.
// Its symbol table is in nvrtc_cgo.go.
var library = libload.Binding{
	Library: libload.Library{
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
	},
	Resolve: cInstall,
}

// load opens NVRTC once per process and resolves its entry points; the
// result is kept.
func load() error {
	_, err := library.Load()
	return err
}

// Library is the NVRTC library loaded (a soname such as "libnvrtc.so.13",
// or the path of the file found), loading it on first use, or the error
// that loading gave: one wrapping ErrNoNVRTC when there is none.
func Library() (string, error) { return library.Load() }
