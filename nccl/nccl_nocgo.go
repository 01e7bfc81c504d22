//go:build !cgo || !linux

package nccl

import "github.com/gocuda/gocuda/internal/libload"

// Without cgo there is no dlopen: loading NCCL fails with ErrNoNCCL (see
// libload.Search.Open), and these stand-ins only keep the package compiling. None of
// them is reachable once loading has failed.

var notLoaded = cres{Stage: libload.StageCall, Code: int(ResultInternalError)}

func cInstall(lib uintptr) string { return "dlopen" }
func cVersion() (int, cres)       { return 0, notLoaded }
func cUniqueID() (UniqueID, cres) { return UniqueID{}, notLoaded }
func cInitRank(ctx uintptr, nranks int, id UniqueID, rank int) (uintptr, cres) {
	return 0, notLoaded
}
func cInitAll(ctxs []uintptr) ([]uintptr, cres)             { return make([]uintptr, len(ctxs)), notLoaded }
func cAsyncError(comm uintptr) (Result, cres)               { return ResultInternalError, notLoaded }
func cFinalize(ctx, comm uintptr) cres                      { return notLoaded }
func cDestroy(ctx, comm uintptr) cres                       { return notLoaded }
func cAbort(ctx, comm uintptr) cres                         { return notLoaded }
func cCommInfo(comm uintptr) (count, rank, dev int, r cres) { return 0, 0, 0, notLoaded }
func cErrorString(r Result) string                          { return "" }
func cLastError(comm uintptr) string                        { return "" }
func cOp(ctx, comm uintptr, grouped bool, kind opKind, send, recv uintptr, count uint64, dtype, op, root int, stream uintptr) cres {
	return notLoaded
}
func cHasRegister() bool                                            { return false }
func cRegister(ctx, comm, buf uintptr, size uint64) (uintptr, cres) { return 0, notLoaded }
func cDeregister(ctx, comm, handle uintptr) cres                    { return notLoaded }
func cGroupStart() cres                                             { return notLoaded }
func cGroupEnd() cres                                               { return notLoaded }
