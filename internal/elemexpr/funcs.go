package elemexpr

import (
	"math"
	"sort"
)

// funcKind is how a math function's overloads are chosen.
type funcKind uint8

const (
	fkFloat  funcKind = iota // float overload if every argument is float, else double (C++ <cmath>)
	fkFloatF                 // the f-suffixed form: arguments converted to float, float result
	fkAbs                    // abs: integers (promoted) keep their type; floats as fkFloat
	fkMinMax                 // min, max: the arguments' common type
	fkClass                  // isnan, isinf, isfinite, signbit: bool of a float or double
)

// mathFunc is a function a body may call.
type mathFunc struct {
	name  string // as written
	base  string // the double form's name: "exp" for exp and expf
	nargs int
	kind  funcKind
	f1    func(float64) float64
	f2    func(float64, float64) float64
	f3    func(float64, float64, float64) float64
	// exact marks functions whose float result computed in double and
	// rounded is the correctly rounded float result, so the host equals
	// the GPU bit for bit (sqrt, fabs, floor, ...).
	exact bool
}

var funcs = map[string]*mathFunc{}

// The functions and their double-precision Go forms.
func init() {
	one := map[string]func(float64) float64{
		"exp": math.Exp, "exp2": math.Exp2, "expm1": math.Expm1, "log": logSub, "log2": math.Log2, "log10": math.Log10,
		"log1p": math.Log1p, "sqrt": math.Sqrt, "rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) }, "cbrt": math.Cbrt,
		"fabs": math.Abs, "floor": math.Floor, "ceil": math.Ceil, "round": math.Round, "trunc": math.Trunc,
		"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin, "acos": math.Acos, "atan": math.Atan,
		"sinh": math.Sinh, "cosh": math.Cosh, "tanh": math.Tanh, "asinh": math.Asinh, "acosh": math.Acosh, "atanh": math.Atanh,
		"erf": math.Erf, "erfc": math.Erfc,
	}
	two := map[string]func(float64, float64) float64{
		"pow": pow, "atan2": atan2, "fmin": fmin, "fmax": fmax, "copysign": math.Copysign, "fmod": math.Mod,
		"hypot": math.Hypot, "fdim": math.Dim,
	}
	exact := map[string]bool{"sqrt": true, "fabs": true, "floor": true, "ceil": true, "round": true, "trunc": true,
		"fmin": true, "fmax": true, "copysign": true, "fmod": true, "fdim": true, "fma": true}
	for name, f := range one {
		funcs[name] = &mathFunc{name: name, base: name, nargs: 1, kind: fkFloat, f1: f, exact: exact[name]}
		funcs[name+"f"] = &mathFunc{name: name + "f", base: name, nargs: 1, kind: fkFloatF, f1: f, exact: exact[name]}
	}
	for name, f := range two {
		funcs[name] = &mathFunc{name: name, base: name, nargs: 2, kind: fkFloat, f2: f, exact: exact[name]}
		funcs[name+"f"] = &mathFunc{name: name + "f", base: name, nargs: 2, kind: fkFloatF, f2: f, exact: exact[name]}
	}
	funcs["fma"] = &mathFunc{name: "fma", base: "fma", nargs: 3, kind: fkFloat, f3: math.FMA, exact: true}
	funcs["fmaf"] = &mathFunc{name: "fmaf", base: "fma", nargs: 3, kind: fkFloatF, f3: math.FMA, exact: true}
	funcs["abs"] = &mathFunc{name: "abs", base: "fabs", nargs: 1, kind: fkAbs, f1: math.Abs, exact: true}
	funcs["min"] = &mathFunc{name: "min", base: "fmin", nargs: 2, kind: fkMinMax, f2: fmin, exact: true}
	funcs["max"] = &mathFunc{name: "max", base: "fmax", nargs: 2, kind: fkMinMax, f2: fmax, exact: true}
	for name, f := range map[string]func(float64) bool{
		"isnan": math.IsNaN, "isinf": func(x float64) bool { return math.IsInf(x, 0) },
		"isfinite": func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }, "signbit": math.Signbit,
	} {
		funcs[name] = &mathFunc{name: name, base: name, nargs: 1, kind: fkClass, f1: boolFunc(f), exact: true}
	}
}

// boolFunc carries a predicate as a float function (1 or 0) for the
// table's sake; the evaluator calls the predicate through classFuncs.
func boolFunc(f func(float64) bool) func(float64) float64 {
	return func(x float64) float64 {
		if f(x) {
			return 1
		}
		return 0
	}
}

// logSub is math.Log, right for subnormal arguments too: Go's assembly
// log on amd64 is off by 0.2 at 1.6e-308 (it gives -708.55, not -708.73).
func logSub(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p52) - 52*math.Ln2
	}
	return math.Log(x)
}

// atan2 is C's atan2, whose result has y's sign; Go's math.Atan2 loses
// it when y/x underflows to 0 (atan2(-1e-298, -1e115) is -π, not π).
func atan2(y, x float64) float64 {
	r := math.Atan2(y, x)
	if r == r {
		r = math.Copysign(r, y)
	}
	return r
}

// fmin is C's fmin: a NaN argument gives the other one, and -0 is below
// +0 (IEEE 754-2019 minimumNumber, as the GPU's min.f32 and min.f64).
func fmin(a, b float64) float64 {
	switch {
	case a < b:
		return a
	case b < a:
		return b
	case a != a:
		return b
	case b != b:
		return a
	case math.Signbit(a):
		return a
	}
	return b
}

// fmax is C's fmax, as fmin.
func fmax(a, b float64) float64 {
	switch {
	case a > b:
		return a
	case b > a:
		return b
	case a != a:
		return b
	case b != b:
		return a
	case math.Signbit(a):
		return b
	}
	return a
}

// funcNames are the callable names, sorted, for messages.
func funcNames() []string {
	var ns []string
	for n := range funcs {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
