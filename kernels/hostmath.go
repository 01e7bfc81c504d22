package kernels

import "math"

// pow64 is the host backend's float64 pow: math.Pow, but for a subnormal
// base, which math.Pow gets wrong (Pow(5e-324, -0.45) is 5.4e138 there,
// 4.4e145 in C's libm and on the GPU), the base is scaled into the normal
// range first and 2^(-64y) multiplied back, so that both backends agree.
func pow64(x, y float64) float64 {
	if x != 0 && math.Abs(x) < 0x1p-1022 {
		return math.Pow(x*0x1p64, y) * math.Exp2(-64*y)
	}
	return math.Pow(x, y)
}
