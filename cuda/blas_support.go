package cuda

// Raw handles for libraries that share our contexts and streams but are
// reached through their own dlopen'd binding (package blas for cuBLAS).
// The values are the driver's CUcontext and CUstream as integers; they are
// valid as long as the Context or Stream is, and must be made current by
// the caller in the same C call that uses them.

// Handle is the context's CUcontext.
func (c *Context) Handle() uintptr { return c.h }

// Handle is the stream's CUstream.
func (s *Stream) Handle() uintptr { return s.h }
