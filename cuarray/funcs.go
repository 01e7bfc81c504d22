package cuarray

// The package-level functions are On[T](nil)'s methods: they make arrays
// on device 0's default stream and run each operation on the default
// stream of its arrays' device.

// New makes an uninitialised array of shape on device 0 (see Ops.New).
func New[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.New(shape...) }

// Zeros makes an array of shape of zeros on device 0.
func Zeros[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.Zeros(shape...) }

// Ones makes an array of shape of ones on device 0.
func Ones[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.Ones(shape...) }

// Full makes an array of shape with every element v on device 0.
func Full[T Elem](v T, shape ...int) (*Array[T], error) { return Ops[T]{}.Full(v, shape...) }

// FromSlice uploads data into a new array on device 0 (see Ops.FromSlice).
func FromSlice[T Elem](data []T, shape ...int) (*Array[T], error) {
	return Ops[T]{}.FromSlice(data, shape...)
}

// Must returns a, panicking if err is not nil: for examples and tests,
// cuarray.Must(cuarray.Zeros[float32](3, 4)).
func Must[A any](a A, err error) A {
	if err != nil {
		panic(err)
	}
	return a
}

// Fill sets every element of dst to v.
func Fill[T Elem](dst *Array[T], v T) error { return Ops[T]{}.Fill(dst, v) }

// Copy copies src into dst, which must have the same shape.
func Copy[T Elem](dst, src *Array[T]) error { return Ops[T]{}.Copy(dst, src) }

// Add sets dst = a + b elementwise, broadcasting; a nil dst makes the
// result (see Ops.Add).
func Add[T Elem](dst, a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.Add(dst, a, b) }

// Sub sets dst = a - b elementwise, broadcasting (see Ops.Add).
func Sub[T Elem](dst, a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.Sub(dst, a, b) }

// Mul sets dst = a * b elementwise, broadcasting (see Ops.Add).
func Mul[T Elem](dst, a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.Mul(dst, a, b) }

// Div sets dst = a / b elementwise, broadcasting (see Ops.Add).
func Div[T Elem](dst, a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.Div(dst, a, b) }

// AddScalar sets dst = a + v elementwise (see Ops.AddScalar).
func AddScalar[T Elem](dst, a *Array[T], v T) (*Array[T], error) {
	return Ops[T]{}.AddScalar(dst, a, v)
}

// SubScalar sets dst = a - v elementwise.
func SubScalar[T Elem](dst, a *Array[T], v T) (*Array[T], error) {
	return Ops[T]{}.SubScalar(dst, a, v)
}

// MulScalar sets dst = a * v elementwise.
func MulScalar[T Elem](dst, a *Array[T], v T) (*Array[T], error) {
	return Ops[T]{}.MulScalar(dst, a, v)
}

// DivScalar sets dst = a / v elementwise.
func DivScalar[T Elem](dst, a *Array[T], v T) (*Array[T], error) {
	return Ops[T]{}.DivScalar(dst, a, v)
}

// Axpy sets dst = alpha*x + y; dst may be y (in place; see Ops.Axpy).
func Axpy[T Elem](dst *Array[T], alpha T, x, y *Array[T]) (*Array[T], error) {
	return Ops[T]{}.Axpy(dst, alpha, x, y)
}

// Scale sets dst = alpha*x; dst may be x (in place; see Ops.Scale).
func Scale[T Elem](dst *Array[T], alpha T, x *Array[T]) (*Array[T], error) {
	return Ops[T]{}.Scale(dst, alpha, x)
}

// Sum returns the sum of x's elements.
func Sum[T Elem](x *Array[T]) (T, error) { return Ops[T]{}.Sum(x) }

// Max returns the largest element of x.
func Max[T Elem](x *Array[T]) (T, error) { return Ops[T]{}.Max(x) }

// Min returns the smallest element of x.
func Min[T Elem](x *Array[T]) (T, error) { return Ops[T]{}.Min(x) }

// Dot returns the sum of x[i]*y[i].
func Dot[T Elem](x, y *Array[T]) (T, error) { return Ops[T]{}.Dot(x, y) }
