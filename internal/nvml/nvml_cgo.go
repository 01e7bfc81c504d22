//go:build cgo && (linux || freebsd)

package nvml

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
#define NVML_ERROR_NOT_SUPPORTED 3

// nv_mig_mode loads NVML, reads the MIG mode of the GPU at bus, and unloads
// it. stage says how far it got: 0 dlopen, 1 a missing symbol, 2 nvmlInit,
// 3 the device lookup, 4 nvmlDeviceGetMigMode; the result is that step's.
static nvmlReturn_t nv_mig_mode(const char *bus, unsigned *cur, unsigned *pend, int *stage, char *msg, int msglen) {
	*stage = 0; msg[0] = 0;
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { const char *e = dlerror(); snprintf(msg, msglen, "%s", e ? e : "dlopen failed"); return -1; }
	nvmlReturn_t (*init)(void) = (nvmlReturn_t (*)(void))dlsym(lib, "nvmlInit_v2");
	nvmlReturn_t (*shutdown)(void) = (nvmlReturn_t (*)(void))dlsym(lib, "nvmlShutdown");
	nvmlReturn_t (*by_bus)(const char*, nvmlDevice_t*) = (nvmlReturn_t (*)(const char*, nvmlDevice_t*))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	nvmlReturn_t (*mig)(nvmlDevice_t, unsigned*, unsigned*) = (nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*))dlsym(lib, "nvmlDeviceGetMigMode");
	const char *(*errstr)(nvmlReturn_t) = (const char *(*)(nvmlReturn_t))dlsym(lib, "nvmlErrorString");
	*stage = 1;
	if (!init || !shutdown || !by_bus) { snprintf(msg, msglen, "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2"); dlclose(lib); return -1; }
	if (!mig) { dlclose(lib); return NVML_ERROR_NOT_SUPPORTED; } // a driver from before MIG
	*stage = 2;
	nvmlReturn_t r = init();
	if (r == 0) {
		nvmlDevice_t d = 0;
		*stage = 3;
		r = by_bus(bus, &d);
		if (r == 0) { *stage = 4; r = mig(d, cur, pend); }
		shutdown();
	}
	if (r && errstr) snprintf(msg, msglen, "%s", errstr(r));
	dlclose(lib);
	return r;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// MIGMode reads the MIG mode of the GPU at pciBusID (as cuda's
// Device.PCIBusID gives it, e.g. "0000:3B:00.0").
func MIGMode(pciBusID string) (MIG, error) {
	bus := C.CString(pciBusID)
	defer C.free(unsafe.Pointer(bus))
	var cur, pend C.unsigned
	var stage C.int
	var msg [256]C.char
	r := C.nv_mig_mode(bus, &cur, &pend, &stage, &msg[0], C.int(len(msg)))
	switch {
	case r == 0:
		return MIG{Supported: true, Current: cur == 1, Pending: pend == 1}, nil
	case r == C.NVML_ERROR_NOT_SUPPORTED && stage >= 1:
		return MIG{}, nil
	}
	steps := []string{"load libnvidia-ml.so.1", "load libnvidia-ml.so.1", "nvmlInit_v2",
		"nvmlDeviceGetHandleByPciBusId_v2(" + pciBusID + ")", "nvmlDeviceGetMigMode"}
	return MIG{}, fmt.Errorf("nvml: %s: %s (%d)", steps[stage], C.GoString(&msg[0]), int(r))
}
