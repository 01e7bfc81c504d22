package blasref

// Gemm returns c's elements after c = alpha*op(a)@op(b) + beta*c, where
// op(a) is m×k and op(b) k×n; c (nil when beta is 0) is m×n with leading
// dimension ldc, and elements of c outside the m×n block are kept.
func Gemm[T float32 | float64](ta, tb bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) []T {
	out := append([]T(nil), c...)
	if out == nil {
		out = make([]T, (m-1)*ldc+n)
	}
	at := func(i, l int) float64 {
		if ta {
			return float64(a[l*lda+i])
		}
		return float64(a[i*lda+l])
	}
	bt := func(l, j int) float64 {
		if tb {
			return float64(b[j*ldb+l])
		}
		return float64(b[l*ldb+j])
	}
	for i := range m {
		for j := range n {
			var sum float64
			for l := range k {
				sum += at(i, l) * bt(l, j)
			}
			v := float64(alpha) * sum
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			out[i*ldc+j] = T(v)
		}
	}
	return out
}

// Gemv returns y after y = alpha*op(a)@x + beta*y, a being m×n (n×m
// when trans) with leading dimension lda.
func Gemv[T float32 | float64](trans bool, alpha T, a []T, lda int, x []T, beta T, y []T) []T {
	out := append([]T(nil), y...)
	for i := range out {
		var sum float64
		for l := range x {
			if trans {
				sum += float64(a[l*lda+i]) * float64(x[l])
			} else {
				sum += float64(a[i*lda+l]) * float64(x[l])
			}
		}
		v := float64(alpha) * sum
		if beta != 0 {
			v += float64(beta) * float64(y[i])
		}
		out[i] = T(v)
	}
	return out
}

// Shapes returns the stored shapes of an m×n×k product's operands: a is
// ar × ac (m × k, or k × m when ta), b is br × bc (k × n, or n × k when tb).
func Shapes(ta, tb bool, m, n, k int) (ar, ac, br, bc int) {
	ar, ac = m, k
	if ta {
		ar, ac = k, m
	}
	br, bc = k, n
	if tb {
		br, bc = n, k
	}
	return ar, ac, br, bc
}
