package elemexpr_test

import (
	"fmt"

	"github.com/gocuda/gocuda/internal/elemexpr"
)

func Example() {
	e, err := elemexpr.Compile(
		[]elemexpr.Param{{Name: "a", Type: elemexpr.Float32}, {Name: "x", Type: elemexpr.Float32}, {Name: "k", Type: elemexpr.Uint8}},
		[]elemexpr.Param{{Name: "z", Type: elemexpr.Float32}},
		"z = a * x + k / 2; z = sqrt(z)")
	if err != nil {
		fmt.Println(err)
		return
	}
	z := make([]float32, 3)
	// a is a scalar; x and k are arrays of at least 3 elements.
	if err := e.Eval(3, float32(2), []float32{0, 1, 2}, []uint8{2, 5, 10}, z); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(z)
	fmt.Print(e.Body())

	_, err = elemexpr.Compile(nil, []elemexpr.Param{{Name: "z", Type: elemexpr.Float32}}, "z = sqtr(2.0f)")
	fmt.Println(err)
	// Output:
	// [1 2 3]
	// z = ((a * x) + ((float)(((int)k) / 2)));
	// z = sqrtf(z);
	// 1:5: unknown function sqtr (did you mean sqrt?); the functions are abs, acos, acosf, acosh, acoshf, asin, asinf, asinh, asinhf, atan, atan2, atan2f, atanf, atanh, atanhf, cbrt, cbrtf, ceil, ceilf, copysign, copysignf, cos, cosf, cosh, coshf, erf, erfc, erfcf, erff, exp, exp2, exp2f, expf, expm1, expm1f, fabs, fabsf, fdim, fdimf, floor, floorf, fma, fmaf, fmax, fmaxf, fmin, fminf, fmod, fmodf, hypot, hypotf, isfinite, isinf, isnan, log, log10, log10f, log1p, log1pf, log2, log2f, logf, max, min, pow, powf, round, roundf, rsqrt, rsqrtf, signbit, sin, sinf, sinh, sinhf, sqrt, sqrtf, tan, tanf, tanh, tanhf, trunc, truncf
}
