//go:build !cgo || !(linux || darwin || freebsd)

package cuda

// Without cgo, or on an OS where the binding does not dlopen the driver,
// there is no way to reach it: every entry point reports ErrNoDriver
// through Init, with noBindingReason, and these stand-ins only keep the
// package compiling. None of them is reachable once Init has failed.

import "unsafe"

var _ unsafe.Pointer

const (
	haveBinding = false
	callPath    = "none"
)

func cLoad() (bool, string)                                                  { return false, noBindingReason }
func errorName(Result) string                                                { return "" }
func errorString(Result) string                                              { return "" }
func cInit() Result                                                          { return errNoDriver }
func cDriverVersion() (int, Result)                                          { return 0, errNoDriver }
func cDeviceCount() (int, Result)                                            { return 0, errNoDriver }
func cDeviceGet(ord int) (int, Result)                                       { return 0, errNoDriver }
func cDeviceName(d int) (string, Result)                                     { return "", errNoDriver }
func cDeviceTotalMem(d int) (uint64, Result)                                 { return 0, errNoDriver }
func cDeviceAttr(a, d int) (int, Result)                                     { return 0, errNoDriver }
func cDevicePCIBusID(d int) (string, Result)                                 { return "", errNoDriver }
func cDeviceUUID(d int) ([16]byte, Result)                                   { return [16]byte{}, errNoDriver }
func cDeviceCanAccessPeer(d, p int) (bool, Result)                           { return false, errNoDriver }
func cPrimaryRetain(d int) (uintptr, Result)                                 { return 0, errNoDriver }
func cCtxSync(c uintptr) Result                                              { return errNoDriver }
func cCtxEnablePeer(c, peer uintptr) Result                                  { return errNoDriver }
func cMemInfo(c uintptr) (uint64, uint64, Result)                            { return 0, 0, errNoDriver }
func cMemAlloc(c uintptr, n uint64) (DevicePtr, Result)                      { return 0, errNoDriver }
func cMemFree(c uintptr, p DevicePtr) Result                                 { return errNoDriver }
func cMemAllocManaged(c uintptr, n uint64, flags uint32) (DevicePtr, Result) { return 0, errNoDriver }
func cMemAllocHost(c uintptr, n uint64) (unsafe.Pointer, Result)             { return nil, errNoDriver }
func cMemFreeHost(c uintptr, p unsafe.Pointer) Result                        { return errNoDriver }
func cHtoD(c uintptr, d DevicePtr, h unsafe.Pointer, n uint64) Result        { return errNoDriver }
func cDtoH(c uintptr, h unsafe.Pointer, d DevicePtr, n uint64) Result        { return errNoDriver }
func cDtoD(c uintptr, d, s DevicePtr, n uint64) Result                       { return errNoDriver }
func cHtoDAsync(c uintptr, d DevicePtr, h unsafe.Pointer, n uint64, s uintptr) Result {
	return errNoDriver
}
func cDtoHAsync(c uintptr, h unsafe.Pointer, d DevicePtr, n uint64, s uintptr) Result {
	return errNoDriver
}
func cDtoDAsync(c uintptr, d, src DevicePtr, n uint64, s uintptr) Result { return errNoDriver }
func cPeerAsync(c uintptr, d DevicePtr, dc uintptr, src DevicePtr, sc uintptr, n uint64, s uintptr) Result {
	return errNoDriver
}
func cMemset8Async(c uintptr, d DevicePtr, v uint8, n uint64, s uintptr) Result   { return errNoDriver }
func cMemset32Async(c uintptr, d DevicePtr, v uint32, n uint64, s uintptr) Result { return errNoDriver }
func cStreamCreate(c uintptr, flags uint32) (uintptr, Result)                     { return 0, errNoDriver }
func cStreamDestroy(c, s uintptr) Result                                          { return errNoDriver }
func cStreamSync(c, s uintptr) Result                                             { return errNoDriver }
func cStreamQuery(c, s uintptr) Result                                            { return errNoDriver }
func cStreamWaitEvent(c, s, e uintptr) Result                                     { return errNoDriver }
func cEventCreate(c uintptr, flags uint32) (uintptr, Result)                      { return 0, errNoDriver }
func cEventDestroy(c, e uintptr) Result                                           { return errNoDriver }
func cEventRecord(c, e, s uintptr) Result                                         { return errNoDriver }
func cEventQuery(c, e uintptr) Result                                             { return errNoDriver }
func cEventSync(c, e uintptr) Result                                              { return errNoDriver }
func cEventElapsed(c, start, end uintptr) (float32, Result)                       { return 0, errNoDriver }
func cModuleLoad(c uintptr, image []byte) (uintptr, Result)                       { return 0, errNoDriver }
func cModuleUnload(c, m uintptr) Result                                           { return errNoDriver }
func cModuleFunction(c, m uintptr, name string) (uintptr, Result)                 { return 0, errNoDriver }
func cLaunch(c, f uintptr, grid, block Dim3, shmem uint32, s uintptr, argbuf []byte, offsets []int32) Result {
	return errNoDriver
}
func cLaunchWords(c, f uintptr, grid, block Dim3, shmem uint32, s uintptr, words []uint64) Result {
	return errNoDriver
}

// maxWords matches the cgo build's, so that LaunchWords checks the same.
const maxWords = 16

func cWordsAt(words []uint64, i, size int) uint64 {
	if i < 0 || i >= len(words) {
		return 0
	}
	if size == 4 {
		return uint64(*(*uint32)(unsafe.Pointer(&words[i])))
	}
	return words[i]
}
func cGranularity(c uintptr, dev int, recommended bool) (uint64, Result)   { return 0, errNoDriver }
func cAddressReserve(c uintptr, n, align uint64) (DevicePtr, Result)       { return 0, errNoDriver }
func cAddressFree(c uintptr, p DevicePtr, n uint64) Result                 { return errNoDriver }
func cMemCreate(c uintptr, n uint64, dev int) (uint64, Result)             { return 0, errNoDriver }
func cMemRelease(c uintptr, h uint64) Result                               { return errNoDriver }
func cMemMap(c uintptr, va DevicePtr, n uint64, h uint64) Result           { return errNoDriver }
func cMemUnmap(c uintptr, va DevicePtr, n uint64) Result                   { return errNoDriver }
func cMemSetAccess(c uintptr, va DevicePtr, n uint64, dev int) Result      { return errNoDriver }
func cPoolCreate(c uintptr, dev int) (uintptr, Result)                     { return 0, errNoDriver }
func cPoolDestroy(c, p uintptr) Result                                     { return errNoDriver }
func cPoolSet(c, p uintptr, attr int, v uint64) Result                     { return errNoDriver }
func cPoolGet(c, p uintptr, attr int) (uint64, Result)                     { return 0, errNoDriver }
func cPoolTrim(c, p uintptr, keep uint64) Result                           { return errNoDriver }
func cAllocAsync(c uintptr, n uint64, pool, s uintptr) (DevicePtr, Result) { return 0, errNoDriver }
func cFreeAsync(c uintptr, p DevicePtr, s uintptr) Result                  { return errNoDriver }
func cNoop()                                                               {}
func cRawCtxGetCurrent() (uintptr, Result)                                 { return 0, errNoDriver }
func cCtxGetDevice(c uintptr) (int, Result)                                { return 0, errNoDriver }
func cBenchC(which int, c, h uintptr, n int64) int64                       { return -1 }
func cBenchLaunch(c, f, s uintptr, p DevicePtr, m, grid, block uint32, n, burst int64) int64 {
	return -1
}
func cBeginCapture(c, s uintptr, mode int) Result      { return errNoDriver }
func cEndCapture(c, s uintptr) (uintptr, Result)       { return 0, errNoDriver }
func cIsCapturing(c, s uintptr) (int, Result)          { return 0, errNoDriver }
func cGraphInstantiate(c, g uintptr) (uintptr, Result) { return 0, errNoDriver }
func cGraphLaunch(c, e, s uintptr) Result              { return errNoDriver }
func cGraphExecUpdate(c, e, g uintptr) (int, Result)   { return 0, errNoDriver }
func cGraphExecDestroy(c, e uintptr) Result            { return errNoDriver }
func cGraphDestroy(c, g uintptr) Result                { return errNoDriver }
func cGraphNodes(c, g uintptr) (int, Result)           { return 0, errNoDriver }
