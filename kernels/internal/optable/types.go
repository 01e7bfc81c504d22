package optable

import "strings"

// Kind is the shape of an operation: its operands and its result type.
type Kind int

const (
	// Unary: dst T = f(x T). Kernel (T* dst, const T* x, i64 n).
	Unary Kind = iota
	// Binary: dst T = f(a T, b T). Kernel (T* dst, const T* a, const T* b, i64 n,
	// unsigned sc), sc the inputs that are single elements (bit 0 a, bit 1 b).
	Binary
	// Compare: dst bool = f(a T, b T). Kernel (bool* dst, const T* a, const T* b, i64 n,
	// unsigned sc), as Binary.
	Compare
	// Where: dst T = cond ? a : b. Kernel (T* dst, const bool* cond, const T* a, const T* b,
	// i64 n, unsigned sc), sc's bits 0, 1, 2 for cond, a, b.
	Where
	// Clamp: dst T = f(x T) with scalars lo and hi of T (as their Go bits).
	// Kernel (T* dst, const T* x, u64 lo, u64 hi, i64 n).
	Clamp
)

// Op is one entry of the table.
type Op struct {
	Name   string // the Go name, in package kernels and cuarray: "Exp"
	Kernel string // the kernels' family: gocuda_<Kernel>_<suffix>
	Kind   Kind
	// Doc completes "Name sets dst = ": a formula and its rules, for the
	// generated doc comments and docs/operations.md.
	Doc string
	// Names are the operation's names elsewhere (NumPy, PyTorch, Julia /
	// CUDA.jl), for docs/operations.md.
	Names string
	Impls []Impl
}

// Impl is an operation's body for some element types.
type Impl struct {
	Types string // suffixes, space-separated: "f32 f64"
	C     string // CUDA C expression; T is the input element type
	Go    string // Go expression
}

// Type is an element type, a column of the table.
type Type struct {
	Suffix string // in kernel names: "f32"
	Go     string // "float32"
	C      string // "float"
	DType  string // kernels' DType constant: "Float32"
	Size   int
	Float  bool // float32, float64
	Int    bool // int8, int16, int32, int64, uint8, uint32
	Cplx   bool
	Bool   bool
	// Half: float16 and bfloat16, stored as their bits (C's unsigned
	// short, package half's types in Go). They take every operation the
	// table has for float32, with float32's body: the generated code
	// widens the operands to float32 (exactly), runs the body, and rounds
	// the result once to nearest even (half.go has the emission).
	Half bool
}

// Types are the element types, in kernels.DType order.
var Types = []Type{
	{Suffix: "f32", Go: "float32", C: "float", DType: "Float32", Size: 4, Float: true},
	{Suffix: "f64", Go: "float64", C: "double", DType: "Float64", Size: 8, Float: true},
	{Suffix: "i32", Go: "int32", C: "int", DType: "Int32", Size: 4, Int: true},
	{Suffix: "i64", Go: "int64", C: "i64", DType: "Int64", Size: 8, Int: true},
	{Suffix: "u8", Go: "uint8", C: "u8", DType: "Uint8", Size: 1, Int: true},
	{Suffix: "c64", Go: "complex64", C: "c64", DType: "Complex64", Size: 8, Cplx: true},
	{Suffix: "b8", Go: "bool", C: "bool", DType: "Bool", Size: 1, Bool: true},
	{Suffix: "f16", Go: "half.Float16", C: "unsigned short", DType: "Float16", Size: 2, Half: true},
	{Suffix: "bf16", Go: "half.BFloat16", C: "unsigned short", DType: "BFloat16", Size: 2, Half: true},
	{Suffix: "i8", Go: "int8", C: "i8", DType: "Int8", Size: 1, Int: true},
	{Suffix: "i16", Go: "int16", C: "i16", DType: "Int16", Size: 2, Int: true},
	{Suffix: "u32", Go: "uint32", C: "u32", DType: "Uint32", Size: 4, Int: true},
}

// Name is the type's name in kernels (DType.String) and in docs:
// t.Go, but "float16" and "bfloat16" for package half's types.
func (t Type) Name() string {
	if t.Half {
		return strings.ToLower(strings.TrimPrefix(t.Go, "half."))
	}
	return t.Go
}

// TypeOf is the Type of a suffix; ok is false for an unknown one.
func TypeOf(suffix string) (Type, bool) {
	for _, t := range Types {
		if t.Suffix == suffix {
			return t, true
		}
	}
	return Type{}, false
}

// Case is one operation on one element type: one kernel, one host loop.
type Case struct {
	Op   *Op
	Type Type
	Impl Impl
}

// Cases lists op's element types in Types order, each with its body.
func (op *Op) Cases() []Case {
	var cs []Case
	for _, t := range Types {
		for _, im := range op.Impls {
			// A half type takes float32's body (Type.Half).
			if hasWord(im.Types, t.Suffix) || t.Half && hasWord(im.Types, "f32") {
				cs = append(cs, Case{Op: op, Type: t, Impl: im})
			}
		}
	}
	return cs
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

// KernelName is the exported name of a case's kernel.
func (c Case) KernelName() string { return "gocuda_" + c.Op.Kernel + "_" + c.Type.Suffix }

// ConvertKernelName is the exported name of the conversion from one type
// to another: gocuda_convert_f32_i32 converts float32 to int32.
func ConvertKernelName(from, to Type) string {
	return "gocuda_convert_" + from.Suffix + "_" + to.Suffix
}

// Out is the result's element type of a case.
func (c Case) Out() Type {
	if c.Op.Kind == Compare {
		t, _ := TypeOf("b8")
		return t
	}
	return c.Type
}

// Convert returns the C and Go expressions converting x of type from to
// type to. The rules: numbers convert as in Go (integers wrap, int → float
// rounds to nearest), except float → integer, which truncates toward zero
// and saturates (NaN → 0, below the range → its minimum, above → its
// maximum: CUDA's cvt.rzi.sat, where Go leaves out-of-range values
// undefined); anything → bool is x != 0 (NaN → true); bool → number is 0 or
// 1; → complex64 has imaginary part 0; complex64 → a real type converts the
// real part as float32 would be.
func Convert(from, to Type) (c, g string) {
	cx, gx := "x", "x"
	if from.Cplx {
		switch {
		case to.Cplx:
			return "x", "x"
		case to.Bool:
			return "(x.re != 0 || x.im != 0)", "x != 0"
		}
		from, _ = TypeOf("f32")
		cx, gx = "x.re", "real(x)"
	}
	return convertReal(from, to, cx, gx)
}

// convertReal is Convert from a type other than complex64, of the C and
// Go expressions cx and gx.
func convertReal(from, to Type, cx, gx string) (c, g string) {
	if from.Suffix != to.Suffix && (from.Half || to.Half) {
		return convertHalf(from, to, cx, gx)
	}
	switch {
	case from.Suffix == to.Suffix:
		return cx, gx
	case to.Bool:
		return "(" + cx + " != 0)", gx + " != 0"
	case from.Bool && to.Cplx:
		return "c64{(float)" + cx + ", 0.0f}", "complex(float32(b2u8(" + gx + ")), 0)"
	case from.Bool:
		return "(" + to.C + ")" + cx, to.Go + "(b2u8(" + gx + "))"
	case to.Cplx:
		return "c64{(float)" + cx + ", 0.0f}", "complex(float32(" + gx + "), 0)"
	case from.Float && to.Int:
		return "sat_" + to.Suffix + "((double)" + cx + ")", "sat" + strings.ToUpper(to.Suffix) + "(float64(" + gx + "))"
	}
	return "(" + to.C + ")" + cx, to.Go + "(" + gx + ")"
}
