package host

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
)

// Options configures New. The zero value is one device as large as the
// machine's RAM.
type Options struct {
	// Devices is how many devices the backend offers; 0 means 1. Tests ask
	// for 2 to exercise cross-device code on a machine without GPUs.
	Devices int
	// TotalMemory is each device's memory in bytes; 0 means the machine's
	// MemTotal from /proc/meminfo, or 16 GiB where that cannot be read.
	// It may exceed RAM: memory is reserved without backing, so only bytes
	// that are touched cost RAM.
	TotalMemory uint64
	// StreamCheck switches the stream checker, which reports memory used
	// on one stream while another stream's work on it is not ordered
	// before (see StreamCheck). The zero value takes it from
	// GOCUDA_STREAM_CHECK.
	StreamCheck StreamCheck
	// StreamCheckLog receives each new race's report; nil means stderr.
	StreamCheckLog io.Writer
}

// defaultTotalMemory is used where /proc/meminfo cannot be read.
const defaultTotalMemory = 16 << 30

// Backend is the host backend: devices that live in this process's memory.
type Backend struct {
	devices []*Device

	// check is the stream checker, nil when off: the one load every
	// queued operation pays for it.
	check    atomic.Pointer[checker]
	logMu    sync.Mutex
	checkLog io.Writer // guarded by logMu
	races    raceList

	// faults is the fault injector, nil when off (see SetFaults).
	faults atomic.Pointer[faults]
}

var _ backend.Backend = (*Backend)(nil)

// New returns a host backend. It never fails: every resource it hands out
// is created on demand.
func New(opts Options) backend.Backend {
	n := opts.Devices
	if n < 1 {
		n = 1
	}
	total := opts.TotalMemory
	if total == 0 {
		total = machineMemory()
	}
	b := &Backend{devices: make([]*Device, n), checkLog: opts.StreamCheckLog}
	for i := range b.devices {
		b.devices[i] = newDevice(b, i, total)
	}
	mode := opts.StreamCheck
	if mode < StreamCheckFromEnv || mode > StreamCheckStrict {
		// New cannot fail; an unknown mode is the strictest one, said on the log.
		fmt.Fprintf(b.log(), "gocuda: host backend: Options.StreamCheck = %d is not a mode; using StreamCheckStrict\n", int(mode))
		mode = StreamCheckStrict
	}
	_ = b.SetStreamCheck(mode) // every mode is valid here
	return b
}

func (b *Backend) log() io.Writer {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	if b.checkLog != nil {
		return b.checkLog
	}
	return os.Stderr
}

// Name is "host".
func (b *Backend) Name() string { return "host" }

// DriverVersion is 0: there is no driver.
func (b *Backend) DriverVersion() int { return 0 }

// DeviceCount is the Devices option (at least 1).
func (b *Backend) DeviceCount() int { return len(b.devices) }

// Device returns device ordinal.
func (b *Backend) Device(ordinal int) (backend.Device, error) {
	if ordinal < 0 || ordinal >= len(b.devices) {
		return nil, fmt.Errorf("host: device %d: valid ordinals are 0 to %d: %w",
			ordinal, len(b.devices)-1, backend.ErrNoDevice)
	}
	return b.devices[ordinal], nil
}

// machineMemory reads MemTotal so that the default device is as large as
// the machine, which is what a pool sizing itself from MemInfo expects.
func machineMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return defaultTotalMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24576000 kB
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || fields[0] != "MemTotal:" {
			continue
		}
		kb, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil || kb == 0 {
			break
		}
		return kb << 10
	}
	return defaultTotalMemory
}
