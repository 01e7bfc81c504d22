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

// Add sets dst = a + b elementwise, broadcasting (see Ops.Add).
func Add[T Elem](dst, a, b *Array[T]) error { return Ops[T]{}.Add(dst, a, b) }

// Sub sets dst = a - b elementwise, broadcasting (see Ops.Add).
func Sub[T Elem](dst, a, b *Array[T]) error { return Ops[T]{}.Sub(dst, a, b) }

// Mul sets dst = a * b elementwise, broadcasting (see Ops.Add).
func Mul[T Elem](dst, a, b *Array[T]) error { return Ops[T]{}.Mul(dst, a, b) }

// Div sets dst = a / b elementwise, broadcasting (see Ops.Add).
func Div[T Elem](dst, a, b *Array[T]) error { return Ops[T]{}.Div(dst, a, b) }

// AddScalar sets dst = a + v elementwise.
func AddScalar[T Elem](dst, a *Array[T], v T) error { return Ops[T]{}.AddScalar(dst, a, v) }

// SubScalar sets dst = a - v elementwise.
func SubScalar[T Elem](dst, a *Array[T], v T) error { return Ops[T]{}.SubScalar(dst, a, v) }

// MulScalar sets dst = a * v elementwise.
func MulScalar[T Elem](dst, a *Array[T], v T) error { return Ops[T]{}.MulScalar(dst, a, v) }

// DivScalar sets dst = a / v elementwise.
func DivScalar[T Elem](dst, a *Array[T], v T) error { return Ops[T]{}.DivScalar(dst, a, v) }

// Axpy sets y = alpha*x + y.
func Axpy[T Elem](alpha T, x, y *Array[T]) error { return Ops[T]{}.Axpy(alpha, x, y) }

// Scale sets x = alpha*x.
func Scale[T Elem](alpha T, x *Array[T]) error { return Ops[T]{}.Scale(alpha, x) }

// Exp sets dst = e**x elementwise.
func Exp[T Elem](dst, x *Array[T]) error { return Ops[T]{}.Exp(dst, x) }

// Log sets dst = ln(x) elementwise.
func Log[T Elem](dst, x *Array[T]) error { return Ops[T]{}.Log(dst, x) }

// Tanh sets dst = tanh(x) elementwise.
func Tanh[T Elem](dst, x *Array[T]) error { return Ops[T]{}.Tanh(dst, x) }

// Relu sets dst = max(x, 0) elementwise.
func Relu[T Elem](dst, x *Array[T]) error { return Ops[T]{}.Relu(dst, x) }

// Sum returns the sum of x's elements.
func Sum[T Elem](x *Array[T]) (T, error) { return Ops[T]{}.Sum(x) }

// Max returns the largest element of x.
func Max[T Elem](x *Array[T]) (T, error) { return Ops[T]{}.Max(x) }

// Min returns the smallest element of x.
func Min[T Elem](x *Array[T]) (T, error) { return Ops[T]{}.Min(x) }

// Dot returns the sum of x[i]*y[i].
func Dot[T Elem](x, y *Array[T]) (T, error) { return Ops[T]{}.Dot(x, y) }

// The allocating forms (see Ops.AddNew): each returns a new array from its
// first operand's device, pool and memory kind, computed on that device's
// default stream.

// AddNew returns a + b elementwise, a new array of the broadcast shape.
func AddNew[T Elem](a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.AddNew(a, b) }

// SubNew returns a - b elementwise.
func SubNew[T Elem](a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.SubNew(a, b) }

// MulNew returns a * b elementwise.
func MulNew[T Elem](a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.MulNew(a, b) }

// DivNew returns a / b elementwise.
func DivNew[T Elem](a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.DivNew(a, b) }

// AddScalarNew returns a + v elementwise.
func AddScalarNew[T Elem](a *Array[T], v T) (*Array[T], error) { return Ops[T]{}.AddScalarNew(a, v) }

// SubScalarNew returns a - v elementwise.
func SubScalarNew[T Elem](a *Array[T], v T) (*Array[T], error) { return Ops[T]{}.SubScalarNew(a, v) }

// MulScalarNew returns a * v elementwise.
func MulScalarNew[T Elem](a *Array[T], v T) (*Array[T], error) { return Ops[T]{}.MulScalarNew(a, v) }

// DivScalarNew returns a / v elementwise.
func DivScalarNew[T Elem](a *Array[T], v T) (*Array[T], error) { return Ops[T]{}.DivScalarNew(a, v) }

// ExpNew returns e**x elementwise.
func ExpNew[T Elem](x *Array[T]) (*Array[T], error) { return Ops[T]{}.ExpNew(x) }

// LogNew returns ln(x) elementwise.
func LogNew[T Elem](x *Array[T]) (*Array[T], error) { return Ops[T]{}.LogNew(x) }

// TanhNew returns tanh(x) elementwise.
func TanhNew[T Elem](x *Array[T]) (*Array[T], error) { return Ops[T]{}.TanhNew(x) }

// ReluNew returns max(x, 0) elementwise.
func ReluNew[T Elem](x *Array[T]) (*Array[T], error) { return Ops[T]{}.ReluNew(x) }

// AxpyNew returns alpha*x + y, leaving y as it was.
func AxpyNew[T Elem](alpha T, x, y *Array[T]) (*Array[T], error) {
	return Ops[T]{}.AxpyNew(alpha, x, y)
}

// ScaleNew returns alpha*x.
func ScaleNew[T Elem](alpha T, x *Array[T]) (*Array[T], error) { return Ops[T]{}.ScaleNew(alpha, x) }

// MatMulNew returns a·b for 2-D arrays (see Ops.MatMulNew).
func MatMulNew[T Elem](a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.MatMulNew(a, b) }

// GemmNew returns alpha·op(a)·op(b) for 2-D arrays (see Ops.GemmNew).
func GemmNew[T Elem](transA, transB bool, alpha T, a, b *Array[T]) (*Array[T], error) {
	return Ops[T]{}.GemmNew(transA, transB, alpha, a, b)
}
