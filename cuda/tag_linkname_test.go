//go:build !gocuda_nolinkname

package cuda

const tagNoLinkname = false
