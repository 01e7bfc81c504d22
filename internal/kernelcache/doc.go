// Package kernelcache keeps kernels compiled at run time (rtc.Kernel's
// NVRTC output) in memory for the process and, when a folder is given
// (GOCUDA_KERNEL_CACHE), on disk between processes. Entries are keyed by
// a hash of everything the output depends on; a file that does not read
// back whole is ignored and written again.
package kernelcache
