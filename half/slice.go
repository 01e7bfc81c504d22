package half

// Float16sFromFloat32s rounds src into dst, element by element as
// Float16FromFloat32, and returns how many it converted: as copy, the
// shorter length of the two.
func Float16sFromFloat32s(dst []Float16, src []float32) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, f := range src {
		dst[i] = Float16FromFloat32(f)
	}
	return n
}

// Float32sFromFloat16s widens src into dst exactly and returns how many
// it converted: as copy, the shorter length of the two.
func Float32sFromFloat16s(dst []float32, src []Float16) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, h := range src {
		dst[i] = h.Float32()
	}
	return n
}

// BFloat16sFromFloat32s rounds src into dst, element by element as
// BFloat16FromFloat32, and returns how many it converted: as copy, the
// shorter length of the two.
func BFloat16sFromFloat32s(dst []BFloat16, src []float32) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, f := range src {
		dst[i] = BFloat16FromFloat32(f)
	}
	return n
}

// Float32sFromBFloat16s widens src into dst exactly and returns how many
// it converted: as copy, the shorter length of the two.
func Float32sFromBFloat16s(dst []float32, src []BFloat16) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, b := range src {
		dst[i] = b.Float32()
	}
	return n
}
