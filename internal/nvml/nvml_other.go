//go:build !cgo || !(linux || freebsd)

package nvml

import (
	"errors"
	"runtime"
)

// MIGMode cannot read NVML in this build: it needs cgo, and NVML on linux
// or freebsd.
func MIGMode(pciBusID string) (MIG, error) {
	return MIG{}, errors.New("nvml: not available in this build (needs cgo, on linux or freebsd; this is " + runtime.GOOS + ")")
}
