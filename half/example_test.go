package half_test

import (
	"fmt"

	"github.com/gocuda/gocuda/half"
)

func Example() {
	h := half.Float16FromFloat32(0.1)
	b := half.BFloat16FromFloat32(0.1)
	fmt.Printf("Float16  %#04x prints %v, exactly %.13g\n", uint16(h), h, h.Float64())
	fmt.Printf("BFloat16 %#04x prints %v, exactly %.11g\n", uint16(b), b, b.Float64())
	// Compute in float32 and round back, as a kernel does.
	sum := half.BFloat16FromFloat32(b.Float32() + b.Float32())
	fmt.Println("sum:", sum)
	fmt.Println(half.Float16FromFloat32(65519), half.Float16FromFloat32(65520), half.MaxFloat16.Float32())
	// Output:
	// Float16  0x2e66 prints 0.1, exactly 0.0999755859375
	// BFloat16 0x3dcd prints 0.1, exactly 0.10009765625
	// sum: 0.2
	// 65500 +Inf 65504
}

func ExampleFloat16sFromFloat32s() {
	src := []float32{1, 0.5, 1e-8, 70000}
	dst := make([]half.Float16, len(src))
	n := half.Float16sFromFloat32s(dst, src)
	back := make([]float32, n)
	half.Float32sFromFloat16s(back, dst)
	fmt.Println(n, dst, back)
	// Output: 4 [1 0.5 0 +Inf] [1 0.5 0 +Inf]
}

func ExampleParseFloat16() {
	for _, s := range []string{"3.14159", "65520", "0x1p-24", "one"} {
		h, err := half.ParseFloat16(s)
		fmt.Printf("%s: %v %#04x %v\n", s, h, uint16(h), err)
	}
	// Output:
	// 3.14159: 3.14 0x4248 <nil>
	// 65520: +Inf 0x7c00 half.ParseFloat16: parsing "65520": value out of range (beyond the largest finite Float16; the result is Inf)
	// 0x1p-24: 6e-08 0x0001 <nil>
	// one: 0 0x0000 half.ParseFloat16: parsing "one": invalid syntax (want a decimal or hexadecimal number, Inf or NaN, as strconv.ParseFloat accepts)
}
