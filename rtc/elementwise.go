package rtc

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/elemexpr"
	"github.com/gocuda/gocuda/kernels"
)

// ElementwiseKernel is a kernel gocuda writes from a C expression, in the
// manner of CuPy's ElementwiseKernel: typed inputs and outputs, and a body
// that computes one element of the outputs from one element of the inputs.
//
//	axpy, err := rtc.NewElementwiseKernel("axpy",
//		"float32 a, float32 x, float32 y", "float32 z", "z = a * x + y")
//	err = axpy.Launch(s, float32(2), x, y, z)       // z must have the result's shape
//	z, err := rtc.Apply[float32](axpy, s, float32(2), x, y) // a new z
//
// An input may be given as an array or as a scalar at each launch; arrays
// broadcast against each other by NumPy's rule (cuarray.BroadcastShapes),
// as the built-in Add does, and each output must have exactly the shape
// they broadcast to. gocuda writes a grid-stride kernel for each combination
// of inputs it is launched with (which are scalars, which arrays of the
// result's shape, which broadcast), compiles it with NVRTC on first use on
// each device (cached like NewKernel's, on disk too), and orders, keeps
// alive and marks the arrays exactly as its own operations do.
//
// The same body runs on the host backend: gocuda parses and types it by
// C++'s rules (internal/elemexpr) and evaluates it in Go, on as many
// goroutines as the launch is large, with the same values as the GPU's
// (see docs/interop.md for where they may differ: fused multiply-adds and
// the last ulp of transcendental functions). A Go form (HostFunc), when
// given, runs instead: a Go loop can be faster on one core (about as fast
// for z = a*x + y, about twice for a select; BenchmarkElementwiseHost
// compares them), and it is the way to run a body the host cannot
// evaluate (one calling a Preamble's functions). It is safe for concurrent
// use.
type ElementwiseKernel struct {
	name, op string
	in, out  []ewParam
	body     string
	preamble string
	opts     []string
	host     reflect.Value // the Go form; invalid if none
	// hostScalar[j] says the Go form takes input j as a T rather than a []T.
	hostScalar []bool
	// expr is the body for the host backend when there is no Go form,
	// or exprErr why the host cannot evaluate it: kept, not returned by
	// NewElementwiseKernel, since the kernel still runs on a GPU.
	expr    *elemexpr.Expr
	exprErr error

	specs sync.Map // specialization key → *Kernel
}

// ewParam is one parameter of an elementwise kernel.
type ewParam struct {
	name string
	typ  *ewType
}

// ewType is an element type the generator knows.
type ewType struct {
	goName, cName string
	// scalarC is the C type of a scalar argument of the type (uint8
	// arrives as a 32-bit unsigned, the narrowest scalar Launch packs).
	scalarC string
	dt      kernels.DType
	goType  reflect.Type
	expr    elemexpr.Type // the type in the host's evaluation of the body
}

var ewTypes = map[string]*ewType{
	"float32": {"float32", "float", "float", kernels.Float32, reflect.TypeFor[float32](), elemexpr.Float32},
	"float64": {"float64", "double", "double", kernels.Float64, reflect.TypeFor[float64](), elemexpr.Float64},
	"int32":   {"int32", "int", "int", kernels.Int32, reflect.TypeFor[int32](), elemexpr.Int32},
	"int64":   {"int64", "long long", "long long", kernels.Int64, reflect.TypeFor[int64](), elemexpr.Int64},
	"uint8":   {"uint8", "unsigned char", "unsigned int", kernels.Uint8, reflect.TypeFor[uint8](), elemexpr.Uint8},
}

// ewTypeNames is what a parameter's type may be, for messages.
const ewTypeNames = "float32, float64, int32, int64 or uint8"

// ewHints answer the type names a C or NumPy user may write instead.
var ewHints = map[string]string{
	"float": "float32", "double": "float64", "int": "int32", "long": "int64", "char": "uint8",
	"uchar": "uint8", "byte": "uint8", "float16": "", "half": "", "bool": "", "uint32": "", "uint64": "",
	"int8": "", "int16": "", "uint16": "", "complex128": "",
}

// ewReserved are names a parameter may not take: the body's own i and n
// (as CuPy reserves them), C++ keywords and CUDA's built-in variables.
var ewReserved = map[string]bool{
	"i": true, "n": true,
	"blockIdx": true, "blockDim": true, "threadIdx": true, "gridDim": true, "warpSize": true,
}

func init() {
	for _, w := range strings.Fields(`alignas alignof and asm auto bool break case catch char char16_t char32_t class
		const constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit
		export extern false float for friend goto if inline int long mutable namespace new noexcept not
		nullptr operator or private protected public register reinterpret_cast return short signed sizeof
		static static_assert static_cast struct switch template this thread_local throw true try typedef
		typeid typename union unsigned using virtual void volatile wchar_t while xor`) {
		ewReserved[w] = true
	}
}

// maxEWParams bounds an elementwise kernel's inputs and outputs together,
// so that a launch's arguments (one each, the count, and the shape and
// strides of a broadcast) fit the driver's 64.
const maxEWParams = 24

// parseEWParams parses a parameter list: "float32 a, float32 x", items of
// a Go type name and a C identifier separated by commas. An empty (or
// blank) list has no parameters.
func parseEWParams(what, list string) ([]ewParam, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var ps []ewParam
	for j, item := range strings.Split(list, ",") {
		f := strings.Fields(item)
		switch {
		case len(f) == 0:
			return nil, fmt.Errorf("%s %q: parameter %d is empty (a stray comma?); write \"float32 x, float32 y\"", what, list, j)
		case len(f) == 1:
			return nil, fmt.Errorf("%s %q: parameter %d %q needs a type and a name, as in \"float32 %s\"", what, list, j, f[0], f[0])
		case f[0] == "raw":
			return nil, fmt.Errorf("%s %q: parameter %d %q: raw (indexed) arrays are not supported; write the kernel with NewKernel to index arrays yourself", what, list, j, strings.Join(f, " "))
		case len(f) > 2:
			return nil, fmt.Errorf("%s %q: parameter %d %q has %d words; each parameter is a type and a name, as in \"float32 x\"", what, list, j, strings.Join(f, " "), len(f))
		}
		typ, name := f[0], f[1]
		t, ok := ewTypes[typ]
		if !ok {
			return nil, fmt.Errorf("%s %q: parameter %s has type %q: %s", what, list, name, typ, unknownTypeHint(typ))
		}
		if err := checkEWName(name); err != nil {
			return nil, fmt.Errorf("%s %q: parameter %d: %v", what, list, j, err)
		}
		ps = append(ps, ewParam{name, t})
	}
	return ps, nil
}

func unknownTypeHint(typ string) string {
	accepted := "the types are Go's " + ewTypeNames
	switch hint, known := ewHints[typ]; {
	case typ == "complex64":
		return "complex64 arrays have no C arithmetic here; write the kernel with NewKernel (" + accepted + ")"
	case known && hint != "":
		return fmt.Sprintf("did you mean %s? %s", hint, accepted)
	case len(typ) == 1 && typ[0] >= 'A' && typ[0] <= 'Z':
		return "type placeholders are not supported; name the type (" + accepted + ")"
	}
	return "unknown type; " + accepted
}

func checkEWName(name string) error {
	switch {
	case !identRE.MatchString(name):
		return fmt.Errorf("name %q is not a C identifier (letters, digits, _; not starting with a digit)", name)
	case strings.HasPrefix(name, "_"):
		return fmt.Errorf("name %q starts with _, which is reserved for the generated code", name)
	case ewReserved[name]:
		return fmt.Errorf("name %q is reserved (i and n are the body's element index and count; C++ keywords and CUDA's built-in variables cannot be names)", name)
	}
	return nil
}

// formatEWParams is the canonical form of a parameter list.
func formatEWParams(ps []ewParam) string {
	var b strings.Builder
	for j, p := range ps {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.typ.goName + " " + p.name)
	}
	return b.String()
}

// Preamble adds C++ code above an elementwise kernel's function: helper
// __device__ functions, constants, #includes NVRTC can find. It is an
// option of NewElementwiseKernel only; NewKernel's source holds its own.
func Preamble(code string) Option {
	return func(k *Kernel) error {
		k.preamble += code + "\n"
		return nil
	}
}

// NewElementwiseKernel makes an elementwise kernel called name (a C
// identifier, the GPU function's name in profiles) from its inputs, its
// outputs and its body, CuPy's way:
//
//   - in and out are comma-separated parameters, each a Go element type
//     (float32, float64, int32, int64, uint8) and a C identifier:
//     "float32 a, float32 x". in may be empty; out may not. Names are
//     unique, and i, n, names starting with _, C++ keywords and CUDA's
//     built-in variables are reserved.
//   - body is C++ (CUDA) code run once for each element of the outputs.
//     In it each input is a const of its C type holding the element's
//     value (float for float32, double, int, long long, unsigned char),
//     each output a variable of its type, initialized to 0, that the body
//     sets, i the element's index (a long long, in the outputs' row-major
//     order) and n their count. The CUDA math library is at hand
//     (expf, log1pf, fmaxf, ...).
//
// Outputs are only written: to update an array in place, pass it both as
// an input and as an output ("float32 y" in, "float32 out" out, y as both).
//
// The body runs on both backends: NVRTC compiles it for a GPU, and the
// host backend evaluates it in Go (the grammar, the functions and the
// types are internal/elemexpr's: C's expressions, declarations, if and
// else, CUDA's math functions; no loops). A body the host cannot evaluate
// (one calling a Preamble's function, or a macro of CompileOptions) does
// not fail here, since it may still run on a GPU: a launch on the host
// backend fails, saying where and why.
//
// Options: HostFunc gives a Go form the host backend runs instead of
// evaluating the body (see HostFunc for its form here), CompileOptions
// adds NVRTC options, Preamble adds helper code for the GPU. The
// parameter lists are checked here; the body is compiled at the first
// launch on a GPU, where C errors come back with NVRTC's log.
func NewElementwiseKernel(name, in, out, body string, opts ...Option) (*ElementwiseKernel, error) {
	ctor := "NewElementwiseKernel(" + name + ")"
	fail := func(format string, a ...any) (*ElementwiseKernel, error) {
		return nil, fmt.Errorf("rtc: %s: %s: %w", ctor, fmt.Sprintf(format, a...), backend.ErrInvalidValue)
	}
	if !identRE.MatchString(name) {
		return fail("kernel name %q is not a C identifier", name)
	}
	ins, err := parseEWParams("inputs", in)
	if err != nil {
		return fail("%v", err)
	}
	outs, err := parseEWParams("outputs", out)
	if err != nil {
		return fail("%v", err)
	}
	if len(outs) == 0 {
		return fail("no outputs: an elementwise kernel writes at least one array (out is like \"float32 z\")")
	}
	if len(ins)+len(outs) > maxEWParams {
		return fail("%d inputs and outputs; at most %d (write a Kernel with NewKernel for more)", len(ins)+len(outs), maxEWParams)
	}
	seen := map[string]bool{}
	for _, p := range slices.Concat(ins, outs) {
		if seen[p.name] {
			return fail("parameter name %q is used twice; inputs and outputs need distinct names (pass one array as both to work in place)", p.name)
		}
		seen[p.name] = true
	}
	if strings.TrimSpace(body) == "" {
		return fail("empty body; it sets the outputs from the inputs, as in \"z = a * x + y\"")
	}
	var scratch Kernel
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&scratch); err != nil {
			return fail("%v", err)
		}
	}
	k := &ElementwiseKernel{name: name, op: "elementwise kernel " + name, in: ins, out: outs, body: body,
		preamble: scratch.preamble, opts: scratch.opts, host: scratch.host}
	if k.host.IsValid() {
		if err := k.checkHostSignature(); err != nil {
			return fail("%v", err)
		}
	} else {
		k.expr, k.exprErr = compileBody(ins, outs, body)
	}
	return k, nil
}

// checkHostSignature checks the Go form against the parameters: one
// parameter each, inputs as T or []T, outputs as []T.
func (k *ElementwiseKernel) checkHostSignature() error {
	ft := k.host.Type()
	want := k.hostWant()
	if ft.NumIn() != len(k.in)+len(k.out) {
		return fmt.Errorf("HostFunc %s takes %d parameters; it must take %d, the inputs then the outputs: %s", ft, ft.NumIn(), len(k.in)+len(k.out), want)
	}
	k.hostScalar = make([]bool, len(k.in))
	for j, p := range k.in {
		switch got := ft.In(j); got {
		case p.typ.goType:
			k.hostScalar[j] = true
		case reflect.SliceOf(p.typ.goType):
		default:
			return fmt.Errorf("HostFunc %s: parameter %d (input %s) is %s; it must be %s or []%s: %s", ft, j, p.name, got, p.typ.goName, p.typ.goName, want)
		}
	}
	for j, p := range k.out {
		if got := ft.In(len(k.in) + j); got != reflect.SliceOf(p.typ.goType) {
			return fmt.Errorf("HostFunc %s: parameter %d (output %s) is %s; it must be []%s: %s", ft, len(k.in)+j, p.name, got, p.typ.goName, want)
		}
	}
	return nil
}

// hostWant describes the Go form's expected signature, for messages.
func (k *ElementwiseKernel) hostWant() string {
	var ps []string
	for _, p := range k.in {
		ps = append(ps, p.name+" "+p.typ.goName+" or []"+p.typ.goName)
	}
	for _, p := range k.out {
		ps = append(ps, p.name+" []"+p.typ.goName)
	}
	return "func(" + strings.Join(ps, ", ") + ")"
}

// Name is the kernel's name.
func (k *ElementwiseKernel) Name() string { return k.name }

// HasHost reports whether the kernel has a Go form (HostFunc) for the
// host backend. Without one the host backend evaluates the body.
func (k *ElementwiseKernel) HasHost() bool { return k.host.IsValid() }

// String describes the kernel in canonical form:
// "elementwise kernel axpy(float32 a, float32 x, float32 y) -> (float32 z)".
func (k *ElementwiseKernel) String() string {
	return fmt.Sprintf("%s(%s) -> (%s)", k.op, formatEWParams(k.in), formatEWParams(k.out))
}

// Input kinds at a launch, the letters of a specialization's key.
const (
	kindScalar    = 's' // a scalar
	kindFull      = 'a' // an array of the result's shape: read at i
	kindBroadcast = 'b' // an array broadcast to it: read through strides
)

// ewLaunch is one launch's operands, checked.
type ewLaunch struct {
	kinds   []byte        // per input
	scalars []any         // per input: the scalar, of its parameter's Go type, or nil
	arrs    []cuarray.Arg // the arrays, inputs then outputs, as WithPointersAs takes them
	inArr   []int         // per input: its index in arrs, or -1
	strides [][]int       // per input: BroadcastStrides to shape, for broadcast inputs
	shape   []int
	n       int
}

// Launch queues the kernel on stream s (nil: the arrays' device's default
// stream) with its inputs, then its outputs, in parameter order. An input
// is an *Array of its parameter's type, or a scalar: a value of that Go
// type, or a Go int or float64 (an untyped constant's type) that converts
// to it as a constant would (0.1 to float32 rounds; 2.5 to int32, or 300
// to uint8, is an error). An output is an *Array of its type.
//
// The input arrays must broadcast together (BroadcastShapes), and every
// output must have exactly the shape they broadcast to (with no input
// arrays, the outputs' common shape). An output may be an input of that
// shape (in place) but must not otherwise overlap an input or another
// output. Like the built-in operations it returns once the work is
// queued, ordered after the arrays' earlier work on any stream.
func (k *ElementwiseKernel) Launch(s *cuarray.Stream, args ...any) error {
	l, err := k.check(args)
	if err != nil {
		return err
	}
	return k.launch(s, l)
}

// check matches args against the parameters.
func (k *ElementwiseKernel) check(args []any) (*ewLaunch, error) {
	if want := len(k.in) + len(k.out); len(args) != want {
		return nil, k.errorf(backend.ErrInvalidValue, "%d arguments; it takes %d, the inputs then the outputs: %s", len(args), want, k.String())
	}
	l := &ewLaunch{kinds: make([]byte, len(k.in)), scalars: make([]any, len(k.in)), inArr: make([]int, len(k.in)), strides: make([][]int, len(k.in))}
	var shapes [][]int
	for j, p := range k.in {
		a := args[j]
		l.inArr[j] = -1
		if g, ok := arrayArg(a, cuarray.Read); ok {
			if err := k.checkArray(g, "input", p); err != nil {
				return nil, err
			}
			l.inArr[j] = len(l.arrs)
			l.arrs = append(l.arrs, g)
			shapes = append(shapes, g.Shape())
			continue
		}
		v, err := ewScalar(a, p)
		if err != nil {
			return nil, k.errorf(backend.ErrInvalidValue, "input %s: %v", p.name, err)
		}
		l.kinds[j], l.scalars[j] = kindScalar, v
	}
	for j, p := range k.out {
		g, ok := arrayArg(args[len(k.in)+j], cuarray.Write)
		if !ok {
			return nil, k.errorf(backend.ErrInvalidValue, "output %s is a %T; outputs are arrays (*cuarray.Array[%s]), or use LaunchNew or Apply to make them", p.name, args[len(k.in)+j], p.typ.goName)
		}
		if err := k.checkArray(g, "output", p); err != nil {
			return nil, err
		}
		l.arrs = append(l.arrs, g)
	}
	outs := l.arrs[len(shapes):]
	if len(shapes) > 0 {
		out, x, y, why := broadcast(shapes)
		if why != "" {
			return nil, k.errorf(cuarray.ErrShape, "inputs %s and %s do not broadcast: %s (Reshape one to combine them element by element)",
				k.describe(l, x), k.describe(l, y), why)
		}
		l.shape = out
	} else {
		l.shape = outs[0].Shape()
	}
	for j, o := range outs {
		if !slices.Equal(o.Shape(), l.shape) {
			what := "the shape " + fmtShape(l.shape) + " the inputs broadcast to"
			if len(shapes) == 0 {
				what = "the shape " + fmtShape(l.shape) + " of output " + k.out[0].name + " (with no input arrays the outputs set the shape)"
			}
			return nil, k.errorf(cuarray.ErrShape, "output %s %s does not have %s; outputs must have exactly that shape", k.out[j].name, arrayName(o), what)
		}
	}
	l.n = 1
	for _, d := range l.shape {
		l.n *= d
	}
	for j := range k.in {
		if l.inArr[j] < 0 {
			continue
		}
		g := l.arrs[l.inArr[j]]
		if g.Len() == l.n {
			l.kinds[j] = kindFull
			continue
		}
		l.kinds[j] = kindBroadcast
		// It broadcasts to l.shape: broadcast said so.
		l.strides[j], _ = cuarray.BroadcastStrides(g.Shape(), l.shape)
	}
	if err := k.checkOverlaps(l); err != nil {
		return nil, err
	}
	return l, nil
}

// describe names input x of the broadcast (x counts input arrays only).
func (k *ElementwiseKernel) describe(l *ewLaunch, x int) string {
	for j := range k.in {
		if l.inArr[j] == x {
			return k.in[j].name + " " + arrayName(l.arrs[x])
		}
	}
	return fmt.Sprintf("array %d", x)
}

func (k *ElementwiseKernel) checkArray(g cuarray.Arg, role string, p ewParam) error {
	if err := g.Err(); err != nil {
		return fmt.Errorf("rtc: %s: %s %s: %w", k.op, role, p.name, err)
	}
	if dt := g.DType(); dt != p.typ.dt {
		return k.errorf(kernels.ErrUnsupportedDType, "%s %s is declared %s but is a %s array; pass a *cuarray.Array[%s]", role, p.name, p.typ.goName, arrayName(g), p.typ.goName)
	}
	return nil
}

// arrayName names g's array as cuarray does: "float32[2 3]".
func arrayName(g cuarray.Arg) string { return g.DType().String() + fmtShape(g.Shape()) }

// fmtShape writes a shape as cuarray does: "[2 3]".
func fmtShape(shape []int) string { return fmt.Sprint(shape) }

// broadcast is cuarray.BroadcastShapes, with the two shapes at fault and
// why when they do not broadcast (broadcasting fails for a pair or not at
// all; arrays have no negative dimensions).
func broadcast(shapes [][]int) (out []int, x, y int, why string) {
	out, err := cuarray.BroadcastShapes(shapes...)
	if err == nil {
		return out, 0, 0, ""
	}
	for y = 1; y < len(shapes); y++ {
		for x = range y {
			if why := broadcastPair(shapes[x], shapes[y]); why != "" {
				return nil, x, y, why
			}
		}
	}
	return nil, 0, 0, err.Error()
}

// broadcastPair is why shapes a and b do not broadcast, or "".
func broadcastPair(a, b []int) string {
	nd := max(len(a), len(b))
	for i := range nd {
		da, db := dimAt(a, nd, i), dimAt(b, nd, i)
		if da != db && da != 1 && db != 1 {
			return fmt.Sprintf("dimension %d of the result would be %d in one and %d in the other; aligned at their last dimensions, each pair of dimensions must be equal or one of them 1", i, da, db)
		}
	}
	return ""
}

// dimAt is dimension i of shape aligned at its end to nd dimensions.
func dimAt(shape []int, nd, i int) int {
	if j := i - (nd - len(shape)); j >= 0 {
		return shape[j]
	}
	return 1
}

// checkOverlaps rejects an output that shares memory with an input or
// another output without being exactly that full-shaped input.
func (k *ElementwiseKernel) checkOverlaps(l *ewLaunch) error {
	nin := len(l.arrs) - len(k.out)
	for j := nin; j < len(l.arrs); j++ {
		o := l.arrs[j]
		for x := range j {
			a := l.arrs[x]
			if !a.Overlaps(o) || x < nin && a.SameMemory(o) { // apart, or in place
				continue
			}
			return k.errorf(cuarray.ErrShape, "output %s %s overlaps %s in memory without being the same elements; outputs must be distinct arrays, or exactly an input of the result's shape (in place)",
				k.out[j-nin].name, arrayName(o), k.argName(l, x))
		}
	}
	return nil
}

// argName names l.arrs[x] by its parameter.
func (k *ElementwiseKernel) argName(l *ewLaunch, x int) string {
	nin := len(l.arrs) - len(k.out)
	if x >= nin {
		return "output " + k.out[x-nin].name + " " + arrayName(l.arrs[x])
	}
	return "input " + k.describe(l, x)
}

func (k *ElementwiseKernel) errorf(is error, format string, a ...any) error {
	return fmt.Errorf("rtc: %s: %s: %w", k.op, fmt.Sprintf(format, a...), is)
}

// ewScalar converts a scalar argument to its parameter's Go type.
func ewScalar(a any, p ewParam) (any, error) {
	want := p.typ.goType
	if a == nil {
		return nil, fmt.Errorf("nil; pass an *Array[%s] or a %s", p.typ.goName, p.typ.goName)
	}
	v := reflect.ValueOf(a)
	if v.Type() == want {
		return a, nil
	}
	bad := func(why string) (any, error) {
		return nil, fmt.Errorf("%v (%T) %s; pass a %s, an *Array[%s], or an int or float64 that a %s holds", a, a, why, p.typ.goName, p.typ.goName, p.typ.goName)
	}
	var f float64
	switch x := a.(type) {
	case int:
		if !isFloat(want) {
			if !fitsInt(int64(x), want) {
				return bad("does not fit a " + p.typ.goName)
			}
			return reflect.ValueOf(x).Convert(want).Interface(), nil
		}
		f = float64(x)
	case float64:
		if !isFloat(want) {
			if f := math.Trunc(x); f != x || f < -(1<<63) || f >= 1<<63 || !fitsInt(int64(f), want) {
				return bad("is not a whole number a " + p.typ.goName + " holds")
			}
			return reflect.ValueOf(int64(x)).Convert(want).Interface(), nil
		}
		f = x
	case cuarray.Arg:
		return bad("is an In, Out or InOut argument; pass the *Array itself: the parameter lists say which arrays are read and written")
	default:
		return bad("is not a " + p.typ.goName)
	}
	if want.Kind() == reflect.Float32 {
		if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return bad("overflows float32")
		}
		return float32(f), nil
	}
	return f, nil
}

func isFloat(t reflect.Type) bool { return t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 }

func fitsInt(x int64, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int32:
		return x >= math.MinInt32 && x <= math.MaxInt32
	case reflect.Uint8:
		return x >= 0 && x <= math.MaxUint8
	}
	return true
}

// LaunchNew is Launch with new outputs: it takes the inputs only, makes
// each output with the shape they broadcast to (zero-dimensional for
// scalars only) on s (nil: the first input array's device's default
// stream, or device 0's), and returns them in order, each an
// *Array[T] of its parameter's type. Apply is the typed form for a kernel
// of one output.
func (k *ElementwiseKernel) LaunchNew(s *cuarray.Stream, inputs ...any) ([]any, error) {
	if len(inputs) != len(k.in) {
		return nil, k.errorf(backend.ErrInvalidValue, "LaunchNew takes the %d inputs, not %d: %s", len(k.in), len(inputs), k.String())
	}
	var shapes [][]int
	var dev backend.Device
	var names []string
	for j, a := range inputs {
		if g, ok := arrayArg(a, cuarray.Read); ok {
			if err := k.checkArray(g, "input", k.in[j]); err != nil {
				return nil, err
			}
			shapes = append(shapes, g.Shape())
			names = append(names, k.in[j].name+" "+arrayName(g))
			if dev == nil {
				dev = g.Device()
			}
		}
	}
	shape, x, y, why := broadcast(shapes)
	if why != "" {
		return nil, k.errorf(cuarray.ErrShape, "inputs %s and %s do not broadcast: %s (Reshape one to combine them element by element)", names[x], names[y], why)
	}
	if s == nil {
		var err error
		if dev != nil {
			s, err = cuarray.DefaultStream(dev.Ordinal())
		} else {
			s, err = cuarray.DefaultStream(0)
		}
		if err != nil {
			return nil, fmt.Errorf("rtc: %s: %w", k.op, err)
		}
	}
	outs := make([]any, len(k.out))
	free := func() {
		for _, o := range outs {
			if op, ok := o.(interface{ UnsafeFree() }); ok {
				op.UnsafeFree()
			}
		}
	}
	for j, p := range k.out {
		o, err := newOfDType(p.typ.dt, s, shape)
		if err != nil {
			free()
			return nil, fmt.Errorf("rtc: %s: output %s: %w", k.op, p.name, err)
		}
		outs[j] = o
	}
	if err := k.Launch(s, append(slices.Clip(inputs), outs...)...); err != nil {
		free()
		return nil, err
	}
	return outs, nil
}

// newOfDType is New for an element type known at run time.
func newOfDType(dt kernels.DType, s *cuarray.Stream, shape []int) (any, error) {
	switch dt {
	case kernels.Float32:
		return cuarray.On[float32](s).New(shape...)
	case kernels.Float64:
		return cuarray.On[float64](s).New(shape...)
	case kernels.Int32:
		return cuarray.On[int32](s).New(shape...)
	case kernels.Int64:
		return cuarray.On[int64](s).New(shape...)
	case kernels.Uint8:
		return cuarray.On[uint8](s).New(shape...)
	}
	return nil, fmt.Errorf("no arrays of %s: %w", dt, kernels.ErrUnsupportedDType)
}

// Apply runs k, a kernel of one output of type T, on inputs and returns
// the output, a new array of the shape the inputs broadcast to (see
// LaunchNew):
//
//	z, err := rtc.Apply[float32](axpy, s, float32(2), x, y)
func Apply[T cuarray.Elem](k *ElementwiseKernel, s *cuarray.Stream, inputs ...any) (*cuarray.Array[T], error) {
	if len(k.out) != 1 || k.out[0].typ.dt != kernels.DTypeOf[T]() {
		return nil, k.errorf(backend.ErrInvalidValue, "Apply[%s] needs a kernel of one %s output; this is %s (use LaunchNew)", kernels.DTypeOf[T](), kernels.DTypeOf[T](), k.String())
	}
	outs, err := k.LaunchNew(s, inputs...)
	if err != nil {
		return nil, err
	}
	return outs[0].(*cuarray.Array[T]), nil
}

// launch queues a checked launch on s.
func (k *ElementwiseKernel) launch(s *cuarray.Stream, l *ewLaunch) error {
	on, err := deviceOn(k.op, l.arrs[0].Device()) // there is an output
	if err != nil {
		return err
	}
	if on.GPU != nil {
		return k.launchGPU(on.GPU, s, l)
	}
	return k.launchHost(s, l)
}
