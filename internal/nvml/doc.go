// Package nvml reads what the CUDA driver API does not tell: a GPU's MIG
// mode, from NVML (libnvidia-ml.so.1, installed with the NVIDIA driver),
// dlopen'd at the call as package cuda opens libcuda. gocuda doctor uses
// it. Without cgo, or on an OS where NVML is not opened, it reports that it
// cannot.
package nvml

// MIG is a GPU's multi-instance GPU mode.
type MIG struct {
	// Supported is false for GPUs without MIG (anything before the A100,
	// and most non-datacenter GPUs); Current and Pending are false then.
	Supported bool
	// Current is the mode in effect; Pending the mode after the next GPU
	// reset, when someone has changed it (nvidia-smi -mig 0|1).
	Current, Pending bool
}
