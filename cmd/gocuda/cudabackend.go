package main

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
)

// The command's one seam to the CUDA backend's own types: doctor opens the
// CUDA backend whatever GOCUDA_BACKEND says, to describe the GPUs even when
// the program would run on the host, and bench peer asks whether a pair of
// GPUs copies peer to peer. Everything else goes through backend's
// interfaces.

// openCUDA opens the CUDA backend.
func openCUDA() (backend.Backend, error) { return cudabackend.Open() }

// cudaPeer reports whether dst and src are CUDA devices, and if so whether
// copies from src to dst go peer to peer (after a first copy linked them).
func cudaPeer(dst, src backend.Device) (gpus, direct bool) {
	d, ok1 := dst.(*cudabackend.Device)
	s, ok2 := src.(*cudabackend.Device)
	if !ok1 || !ok2 {
		return false, false
	}
	return true, d.PeerDirect(s)
}
