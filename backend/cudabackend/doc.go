// Package cudabackend implements the backend seam on the CUDA driver
// (package cuda). Each device is driven through its primary context, which
// every call makes current by itself, so any goroutine may use any device.
//
//	b, err := cudabackend.Open() // errors.Is(err, cuda.ErrNoDriver) without a driver
//	dev, _ := b.Device(0)
//	p, _ := dev.Alloc(1 << 20)
package cudabackend
