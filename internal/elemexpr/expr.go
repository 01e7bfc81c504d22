package elemexpr

import (
	"fmt"
	"strings"
	"sync"
)

// Param is a parameter of a body: an input it reads or an output it sets.
type Param struct {
	Name string
	Type Type
}

// Option is an option of Compile.
type Option func(*options)

type options struct {
	typeParams map[string]Type
}

// TypeParam binds a type placeholder (CuPy's T) that the body may name in
// declarations and casts: TypeParam("T", Float32) makes "T t = x" a float.
func TypeParam(name string, t Type) Option {
	return func(o *options) {
		if o.typeParams == nil {
			o.typeParams = map[string]Type{}
		}
		o.typeParams[name] = t
	}
}

// Expr is a checked body: it prints as CUDA C (Body, Function) and
// evaluates on the host (Eval). It is safe for concurrent use.
type Expr struct {
	in, out []*variable
	stmts   []*stmt
	plans   sync.Map // scalar-input mask → *planPool
}

type planPool struct {
	p    *plan
	pool sync.Pool // *frame
}

// Compile parses and type-checks body, whose inputs and outputs are in
// and out (names that are C identifiers, unique; the body also reads i,
// the element's flat index, and n, the element count, both long long).
// Errors are *Error, with the line and column in body.
func Compile(in, out []Param, body string, opts ...Option) (*Expr, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	for name, t := range o.typeParams {
		if t < Bool || t > Float64 {
			return nil, fmt.Errorf("elemexpr: type parameter %s is bound to an invalid type %d", name, t)
		}
		if !isIdent(name) || reserved[name] || funcs[name] != nil {
			return nil, fmt.Errorf("elemexpr: type parameter name %q is not a free C identifier", name)
		}
	}
	e := &Expr{}
	vars := map[string]*variable{
		"i": {name: "i", typ: Int64, kind: vIndex},
		"n": {name: "n", typ: Int64, kind: vCount},
	}
	add := func(ps []Param, kind varKind) ([]*variable, error) {
		var vs []*variable
		for j, p := range ps {
			switch {
			case !isIdent(p.Name):
				return nil, fmt.Errorf("elemexpr: parameter name %q is not a C identifier", p.Name)
			case strings.HasPrefix(p.Name, "_") || reserved[p.Name] || funcs[p.Name] != nil:
				return nil, fmt.Errorf("elemexpr: parameter name %s is reserved (names starting with _, C++ keywords, CUDA built-ins and the math functions)", p.Name)
			case p.Type < Bool || p.Type > Float64:
				return nil, fmt.Errorf("elemexpr: parameter %s has no valid type (%d)", p.Name, p.Type)
			case vars[p.Name] != nil:
				return nil, fmt.Errorf("elemexpr: parameter name %s is used twice (i and n are the body's own)", p.Name)
			case o.typeParams[p.Name] != 0:
				return nil, fmt.Errorf("elemexpr: parameter name %s is also a type parameter", p.Name)
			}
			v := &variable{name: p.Name, typ: p.Type, kind: kind, param: j, isConst: kind == vInput}
			vars[p.Name] = v
			vs = append(vs, v)
		}
		return vs, nil
	}
	var err error
	if e.in, err = add(in, vInput); err != nil {
		return nil, err
	}
	if e.out, err = add(out, vOutput); err != nil {
		return nil, err
	}
	if e.stmts, err = parseBody(body, o.typeParams, vars); err != nil {
		return nil, err
	}
	c := &checker{vars: vars}
	if err := c.check(e.stmts); err != nil {
		return nil, err
	}
	return e, nil
}

func isIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for j := 1; j < len(s); j++ {
		if !isLetter(s[j]) && !isDigit(s[j]) {
			return false
		}
	}
	return true
}

// Eval runs the body for n elements: i runs from 0 to n-1 and the body's
// n is n. It is EvalAt(0, n, n, args...).
func (e *Expr) Eval(n int, args ...any) error { return e.EvalAt(0, int64(n), n, args...) }

// EvalAt runs the body for n elements whose indices (the body's i) are
// first, first+1, ..., in a run of total elements (the body's n), so that
// a caller may split one launch into pieces, on goroutines too.
//
// args are the inputs, then the outputs, in parameter order. An input is
// a scalar of its type's Go type (float32, float64, int32, int64, uint8,
// uint32, uint64, bool), the same value for every element, or a slice of
// it ([]float32, ...) of at least n elements, element k being the k-th
// element's value. An output is such a slice, whose first n elements are
// set. Arrays broadcast or strided are the caller's to gather into a
// slice. An output may be the same slice as an input (in place); it must
// not otherwise overlap an input or another output.
func (e *Expr) EvalAt(first, total int64, n int, args ...any) error {
	if len(args) != len(e.in)+len(e.out) {
		return fmt.Errorf("elemexpr: %d arguments; the body takes %d, the inputs then the outputs (%s)", len(args), len(e.in)+len(e.out), e.signature())
	}
	if n < 0 {
		return fmt.Errorf("elemexpr: %d elements; the count is at least 0", n)
	}
	mask := make([]byte, len(e.in))
	for j, v := range e.in {
		isScalar, err := checkArg(args[j], v, n, true)
		if err != nil {
			return err
		}
		mask[j] = '0'
		if isScalar {
			mask[j] = '1'
		}
	}
	for j, v := range e.out {
		if _, err := checkArg(args[len(e.in)+j], v, n, false); err != nil {
			return err
		}
	}
	pp := e.planFor(string(mask))
	f, _ := pp.pool.Get().(*frame)
	if f == nil {
		f = newFrame(pp.p)
	}
	defer pp.pool.Put(f)
	setters := make([]func(lo, hi int), 0, len(args))
	for j := range e.in {
		r := pp.p.in[j]
		if mask[j] == '1' {
			setScalar(f.regs[r], args[j])
		} else {
			setters = append(setters, viewSetter(f.regs[r], args[j]))
		}
	}
	for j := range e.out {
		setters = append(setters, viewSetter(f.regs[pp.p.outVec[j]], args[len(e.in)+j]))
	}
	if pp.p.count >= 0 {
		(*get[int64](f, pp.p.count))[0] = total
	}
	var idx []int64
	if pp.p.index >= 0 {
		idx = *get[int64](f, pp.p.index)
	}
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		for _, s := range setters {
			s(lo, hi)
		}
		if idx != nil {
			base := first + int64(lo)
			for k := range hi - lo {
				idx[k] = base + int64(k)
			}
		}
		for _, op := range f.ops {
			op(hi - lo)
		}
	}
	for _, s := range setters {
		s(0, 0) // drop the caller's slices: the frame goes back to the pool
	}
	return nil
}

func (e *Expr) planFor(mask string) *planPool {
	if pp, ok := e.plans.Load(mask); ok {
		return pp.(*planPool)
	}
	scalarIn := make([]bool, len(mask))
	for j := range mask {
		scalarIn[j] = mask[j] == '1'
	}
	pp, _ := e.plans.LoadOrStore(mask, &planPool{p: compilePlan(e.in, e.out, e.stmts, scalarIn)})
	return pp.(*planPool)
}

func (e *Expr) signature() string {
	var ps []string
	for _, v := range e.in {
		ps = append(ps, v.name+" "+v.typ.String()+" or []"+v.typ.String())
	}
	for _, v := range e.out {
		ps = append(ps, v.name+" []"+v.typ.String())
	}
	return strings.Join(ps, ", ")
}

// checkArg checks one argument; for an input it says whether it is a scalar.
func checkArg(a any, v *variable, n int, input bool) (bool, error) {
	role := "output"
	if input {
		role = "input"
	}
	l, isSlice, isScalar := argInfo(a, v.typ)
	switch {
	case isSlice && l < n:
		return false, fmt.Errorf("elemexpr: %s %s has %d elements; it needs at least %d", role, v.name, l, n)
	case isSlice:
		return false, nil
	case isScalar && input:
		return true, nil
	case input:
		return false, fmt.Errorf("elemexpr: input %s is a %T; it is a %s or a []%s", v.name, a, v.typ, v.typ)
	}
	return false, fmt.Errorf("elemexpr: output %s is a %T; it is a []%s", v.name, a, v.typ)
}

func argInfo(a any, t Type) (n int, isSlice, isScalar bool) {
	switch x := a.(type) {
	case []bool:
		return len(x), t == Bool, false
	case []uint8:
		return len(x), t == Uint8, false
	case []int32:
		return len(x), t == Int32, false
	case []uint32:
		return len(x), t == Uint32, false
	case []int64:
		return len(x), t == Int64, false
	case []uint64:
		return len(x), t == Uint64, false
	case []float32:
		return len(x), t == Float32, false
	case []float64:
		return len(x), t == Float64, false
	case bool:
		return 0, false, t == Bool
	case uint8:
		return 0, false, t == Uint8
	case int32:
		return 0, false, t == Int32
	case uint32:
		return 0, false, t == Uint32
	case int64:
		return 0, false, t == Int64
	case uint64:
		return 0, false, t == Uint64
	case float32:
		return 0, false, t == Float32
	case float64:
		return 0, false, t == Float64
	}
	return 0, false, false
}

func setScalar(r any, a any) {
	switch x := a.(type) {
	case bool:
		(*r.(*[]bool))[0] = x
	case uint8:
		(*r.(*[]uint8))[0] = x
	case int32:
		(*r.(*[]int32))[0] = x
	case uint32:
		(*r.(*[]uint32))[0] = x
	case int64:
		(*r.(*[]int64))[0] = x
	case uint64:
		(*r.(*[]uint64))[0] = x
	case float32:
		(*r.(*[]float32))[0] = x
	case float64:
		(*r.(*[]float64))[0] = x
	}
}

func viewSetter(r any, a any) func(lo, hi int) {
	switch x := a.(type) {
	case []bool:
		return view(r.(*[]bool), x)
	case []uint8:
		return view(r.(*[]uint8), x)
	case []int32:
		return view(r.(*[]int32), x)
	case []uint32:
		return view(r.(*[]uint32), x)
	case []int64:
		return view(r.(*[]int64), x)
	case []uint64:
		return view(r.(*[]uint64), x)
	case []float32:
		return view(r.(*[]float32), x)
	case []float64:
		return view(r.(*[]float64), x)
	}
	panic(fmt.Sprintf("elemexpr: no view of %T", a)) // checkArg admits only those
}

func view[T any](p *[]T, s []T) func(lo, hi int) {
	return func(lo, hi int) {
		if hi == 0 {
			*p = nil
			return
		}
		*p = s[lo:hi:hi]
	}
}

// newFrame allocates a plan's buffers and binds its ops to them.
func newFrame(p *plan) *frame {
	f := &frame{p: p, regs: make([]any, len(p.regs))}
	for j, r := range p.regs {
		size := 0
		switch r.kind {
		case rVec, rIndex:
			size = chunk
		case rScalar, rConst, rInScalar, rCount:
			size = 1
		}
		f.regs[j] = newBuf(r.typ, size)
		if r.kind == rConst {
			setConst(f.regs[j], r)
		}
	}
	for k := range p.ops {
		f.ops = append(f.ops, p.ops[k].mk(f, &p.ops[k]))
	}
	return f
}

func newBuf(t Type, n int) any {
	switch t {
	case Bool:
		s := make([]bool, n)
		return &s
	case Uint8:
		s := make([]uint8, n)
		return &s
	case Int32:
		s := make([]int32, n)
		return &s
	case Uint32:
		s := make([]uint32, n)
		return &s
	case Int64:
		s := make([]int64, n)
		return &s
	case Uint64:
		s := make([]uint64, n)
		return &s
	case Float32:
		s := make([]float32, n)
		return &s
	}
	s := make([]float64, n)
	return &s
}

func setConst(b any, r reg) {
	switch r.typ {
	case Bool:
		*b.(*[]bool) = []bool{r.ival != 0}
	case Uint8:
		(*b.(*[]uint8))[0] = uint8(r.ival)
	case Int32:
		(*b.(*[]int32))[0] = int32(r.ival)
	case Uint32:
		(*b.(*[]uint32))[0] = uint32(r.ival)
	case Int64:
		(*b.(*[]int64))[0] = int64(r.ival)
	case Uint64:
		(*b.(*[]uint64))[0] = r.ival
	case Float32:
		(*b.(*[]float32))[0] = float32(r.fval)
	case Float64:
		(*b.(*[]float64))[0] = r.fval
	}
}
