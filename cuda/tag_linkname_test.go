//go:build cgo && (linux || darwin || freebsd) && !gocuda_nolinkname

package cuda

const tagNoLinkname = false
