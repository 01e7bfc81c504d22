package optable

// Ops is the table: every generated elementwise operation, once. The
// generator (Generate) turns each entry into its CUDA kernels, its host
// loops and its API; see doc.go for the fields and how to add an entry.
//
// Bodies are expressions of the element type: x (and y, the second
// operand) in the element's C type for C, in its Go type for Go. Helpers
// they call are hand-written once: in kernels/cuda/optable.cuh for C
// (sign_, minimum_, sat_i32, ...) and kernels/optable.go for Go.
var Ops = []Op{
	// Math on floats, in the type's precision on a GPU (expf for float32).
	floatMath("Exp", "exp", "exp", "Exp", "e**x", "np.exp, torch.exp, exp.(x)"),
	{
		Name: "Log", Kernel: "log", Kind: Unary, Doc: "ln(x) (NaN for x < 0, -Inf for 0)",
		Names: "np.log, torch.log, log.(x)",
		Impls: []Impl{
			{Types: "f32", C: "logf(x)", Go: "float32(math.Log(float64(x)))"},
			// logSubnormal: Go's math.Log is wrong for float64 subnormals on amd64.
			{Types: "f64", C: "log(x)", Go: "logSubnormal(x)"},
		},
	},
	floatMath("Log1p", "log1p", "log1p", "Log1p", "ln(1 + x), accurate near 0", "np.log1p, torch.log1p, log1p.(x)"),
	floatMath("Expm1", "expm1", "expm1", "Expm1", "e**x - 1, accurate near 0", "np.expm1, torch.expm1, expm1.(x)"),
	floatMath("Sqrt", "sqrt", "sqrt", "Sqrt", "√x (NaN for x < 0)", "np.sqrt, torch.sqrt, sqrt.(x)"),
	{
		Name: "Rsqrt", Kernel: "rsqrt", Kind: Unary, Doc: "1/√x (+Inf for 0, NaN for x < 0)",
		Names: "torch.rsqrt, CUDA rsqrtf, 1 ./ sqrt.(x)",
		Impls: []Impl{
			{Types: "f32", C: "rsqrtf(x)", Go: "float32(1 / math.Sqrt(float64(x)))"},
			{Types: "f64", C: "rsqrt(x)", Go: "1 / math.Sqrt(x)"},
		},
	},
	{
		Name: "Abs", Kernel: "abs", Kind: Unary, Doc: "|x|; for integers the most negative value stays itself (it wraps, as -x does in Go)",
		Names: "np.abs, torch.abs, abs.(x)",
		Impls: []Impl{
			{Types: "f32", C: "fabsf(x)", Go: "float32(math.Abs(float64(x)))"},
			{Types: "f64", C: "fabs(x)", Go: "math.Abs(x)"},
			{Types: "i32 i64 i8 i16", C: "abs_(x)", Go: "absInt(x)"},
			{Types: "u8 u32", C: "x", Go: "x"},
		},
	},
	{
		Name: "Neg", Kernel: "neg", Kind: Unary, Doc: "-x", Names: "np.negative, torch.neg, -x",
		Impls: []Impl{{Types: "f32 f64", C: "-x", Go: "-x"}},
	},
	{
		Name: "Sign", Kernel: "sign", Kind: Unary, Doc: "-1, 0 or 1 as x is negative, zero or positive (NaN for NaN, 0 for -0)",
		Names: "np.sign, torch.sign, sign.(x)",
		Impls: []Impl{
			{Types: "f32 f64 i32 i64 i8 i16", C: "sign_(x)", Go: "signOf(x)"},
			{Types: "u8", C: "(u8)(x != 0)", Go: "b2u8(x != 0)"},
			{Types: "u32", C: "(u32)(x != 0)", Go: "uint32(b2u8(x != 0))"},
		},
	},
	floatMath("Floor", "floor", "floor", "Floor", "⌊x⌋, the largest integer ≤ x", "np.floor, torch.floor, floor.(x)"),
	floatMath("Ceil", "ceil", "ceil", "Ceil", "⌈x⌉, the smallest integer ≥ x", "np.ceil, torch.ceil, ceil.(x)"),
	floatMath("Round", "round", "rint", "RoundToEven", "x rounded to the nearest integer, halves to even (2.5 → 2)", "np.round (np.rint), torch.round, round.(x)"),
	floatMath("Sin", "sin", "sin", "Sin", "sin(x)", "np.sin, torch.sin, sin.(x)"),
	floatMath("Cos", "cos", "cos", "Cos", "cos(x)", "np.cos, torch.cos, cos.(x)"),
	floatMath("Tan", "tan", "tan", "Tan", "tan(x)", "np.tan, torch.tan, tan.(x)"),
	floatMath("Tanh", "tanh", "tanh", "Tanh", "tanh(x)", "np.tanh, torch.tanh, tanh.(x)"),
	floatMath("Erf", "erf", "erf", "Erf", "the error function erf(x)", "scipy.special.erf, torch.erf, SpecialFunctions.erf.(x)"),
	{
		Name: "Sigmoid", Kernel: "sigmoid", Kind: Unary, Doc: "1 / (1 + e**-x), in T's precision (0 where e**-x overflows T)",
		Names: "scipy.special.expit, torch.sigmoid, NNlib.sigmoid.(x)",
		Impls: []Impl{
			{Types: "f32", C: "1.0f / (1.0f + expf(-x))", Go: "1 / (1 + float32(math.Exp(-float64(x))))"},
			{Types: "f64", C: "1.0 / (1.0 + exp(-x))", Go: "1 / (1 + math.Exp(-x))"},
		},
	},
	{
		Name: "Relu", Kernel: "relu", Kind: Unary, Doc: "max(x, 0) (0 for NaN)",
		Names: "np.maximum(x, 0), torch.relu, NNlib.relu.(x)",
		Impls: []Impl{{Types: "f32 f64", C: "x > 0 ? x : (T)0", Go: "reluOf(x)"}},
	},

	// Binary math.
	{
		Name: "Pow", Kernel: "pow", Kind: Binary, Doc: "a**b (C's and Go's pow: pow(x, 0) = 1 even for NaN, pow(1, y) = 1)",
		Names: "np.power, torch.pow, a .^ b",
		Impls: []Impl{
			{Types: "f32", C: "powf(x, y)", Go: "float32(math.Pow(float64(x), float64(y)))"},
			{Types: "f64", C: "pow(x, y)", Go: "pow64(x, y)"},
		},
	},
	{
		Name: "Minimum", Kernel: "minimum", Kind: Binary, Doc: "the smaller of a and b, NaN if either is NaN (a where they are equal)",
		Names: "np.minimum, torch.minimum, min.(a, b)",
		Impls: []Impl{{Types: realTypes, C: "minimum_(x, y)", Go: "minimumOf(x, y)"}},
	},
	{
		Name: "Maximum", Kernel: "maximum", Kind: Binary, Doc: "the larger of a and b, NaN if either is NaN (a where they are equal)",
		Names: "np.maximum, torch.maximum, max.(a, b)",
		Impls: []Impl{{Types: realTypes, C: "maximum_(x, y)", Go: "maximumOf(x, y)"}},
	},

	// Comparisons, into bool. NaN compares unequal to everything.
	compare("Equal", "eq", "==", "a == b", "np.equal, torch.eq, a .== b", true),
	compare("NotEqual", "ne", "!=", "a != b (true where either is NaN)", "np.not_equal, torch.ne, a .!= b", true),
	compare("Less", "lt", "<", "a < b", "np.less, torch.lt, a .< b", false),
	compare("LessEqual", "le", "<=", "a <= b", "np.less_equal, torch.le, a .<= b", false),
	compare("Greater", "gt", ">", "a > b", "np.greater, torch.gt, a .> b", false),
	compare("GreaterEqual", "ge", ">=", "a >= b", "np.greater_equal, torch.ge, a .>= b", false),

	// Logic on bool.
	{
		Name: "LogicalAnd", Kernel: "and", Kind: Binary, Doc: "a && b", Names: "np.logical_and, torch.logical_and, a .& b",
		Impls: []Impl{{Types: "b8", C: "x && y", Go: "x && y"}},
	},
	{
		Name: "LogicalOr", Kernel: "or", Kind: Binary, Doc: "a || b", Names: "np.logical_or, torch.logical_or, a .| b",
		Impls: []Impl{{Types: "b8", C: "x || y", Go: "x || y"}},
	},
	{
		Name: "LogicalXor", Kernel: "xor", Kind: Binary, Doc: "a != b (exactly one is true)", Names: "np.logical_xor, torch.logical_xor, xor.(a, b)",
		Impls: []Impl{{Types: "b8", C: "x != y", Go: "x != y"}},
	},
	{
		Name: "LogicalNot", Kernel: "not", Kind: Unary, Doc: "!x", Names: "np.logical_not, torch.logical_not, .!x",
		Impls: []Impl{{Types: "b8", C: "!x", Go: "!x"}},
	},

	// Selection.
	{
		Name: "Where", Kernel: "where", Kind: Where, Doc: "a where cond is true, else b",
		Names: "np.where(cond, a, b), torch.where, ifelse.(cond, a, b)",
		Impls: []Impl{{Types: realTypes + " c64 b8", C: "c ? x : y", Go: "selectOf(c, x, y)"}},
	},
	{
		Name: "Clamp", Kernel: "clamp", Kind: Clamp, Doc: "Minimum(Maximum(x, lo), hi) for scalars lo and hi: NaN stays NaN, and lo > hi gives hi everywhere",
		Names: "np.clip, torch.clamp, clamp.(x, lo, hi)",
		Impls: []Impl{{Types: realTypes, C: "minimum_(maximum_(x, lo), hi)", Go: "minimumOf(maximumOf(x, lo), hi)"}},
	},
}

// realTypes are the suffixes of the real number types (the integers and
// float32 and float64; the half types follow float32).
const realTypes = "f32 f64 i32 i64 u8 i8 i16 u32"

// floatMath is a unary operation on float32 and float64 that is one C
// math function (cname, with an f suffix for float32) and one Go math
// function (math.goname, computed in float64 and rounded for float32).
func floatMath(name, kernel, cname, goname, doc, names string) Op {
	return Op{
		Name: name, Kernel: kernel, Kind: Unary, Doc: doc, Names: names,
		Impls: []Impl{
			{Types: "f32", C: cname + "f(x)", Go: "float32(math." + goname + "(float64(x)))"},
			{Types: "f64", C: cname + "(x)", Go: "math." + goname + "(x)"},
		},
	}
}

// compare is a comparison on the real types (and bool, for the equalities).
func compare(name, kernel, op, doc, names string, onBool bool) Op {
	types := realTypes
	if onBool {
		types += " b8"
	}
	return Op{
		Name: name, Kernel: kernel, Kind: Compare, Doc: doc, Names: names,
		Impls: []Impl{{Types: types, C: "x " + op + " y", Go: "x " + op + " y"}},
	}
}
