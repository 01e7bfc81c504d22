package elemexpr

import (
	"fmt"
	"strings"

	"github.com/gocuda/gocuda/internal/suggest"
)

type varKind uint8

const (
	vInput  varKind = iota // a parameter read by the body
	vOutput                // a parameter the body sets (0 until set)
	vLocal                 // declared in the body
	vIndex                 // i: the element's flat index
	vCount                 // n: the number of elements
)

// variable is a name the body uses.
type variable struct {
	name    string
	typ     Type
	kind    varKind
	param   int // index among the inputs or outputs
	isConst bool
	set     bool // a local has been given a value (checking only)
	pos     Pos
}

type checker struct {
	vars map[string]*variable
}

// check types the statements in place, wrapping operands in conversions.
func (c *checker) check(stmts []*stmt) error {
	for _, s := range stmts {
		if err := c.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) stmt(s *stmt) error {
	if s.isIf {
		return c.ifStmt(s)
	}
	if s.decl {
		if old, ok := c.vars[s.name]; ok {
			what := "a local declared at " + old.pos.String()
			switch old.kind {
			case vInput:
				what = "an input"
			case vOutput:
				what = "an output"
			case vIndex, vCount:
				what = "the body's element " + map[varKind]string{vIndex: "index", vCount: "count"}[old.kind]
			}
			return errorf(s.pos, "%s is already %s; choose another name", s.name, what)
		}
		if err := checkName(s.pos, s.name); err != nil {
			return err
		}
		v := &variable{name: s.name, typ: s.declTy, kind: vLocal, isConst: s.isConst, pos: s.pos}
		if s.rhs != nil {
			r, err := c.expr(s.rhs)
			if err != nil {
				return err
			}
			if v.typ == Invalid {
				v.typ = r.typ // auto
			}
			s.rhs = convert(r, v.typ)
			v.set = true
		}
		s.declTy = v.typ
		s.v = v
		c.vars[s.name] = v // after the initializer: "float t = t" reads an outer t
		return nil
	}
	v, ok := c.vars[s.name]
	if !ok {
		return c.unknown(s.pos, s.name)
	}
	switch {
	case v.kind == vInput:
		return errorf(s.pos, "%s is an input, which the body only reads; assign to an output, or pass the array as an input and an output to update it in place", s.name)
	case v.kind == vIndex || v.kind == vCount:
		return errorf(s.pos, "%s is the body's element %s, which the body only reads", s.name, map[varKind]string{vIndex: "index", vCount: "count"}[v.kind])
	case v.isConst:
		return errorf(s.pos, "%s is declared const", s.name)
	}
	r, err := c.expr(s.rhs)
	if err != nil {
		return err
	}
	if s.op != "=" {
		if v.kind == vLocal && !v.set {
			return errorf(s.pos, "%s is read (by %s) before it is given a value", s.name, s.op)
		}
		cur := &node{kind: nIdent, pos: s.pos, op: s.name, typ: v.typ, v: v}
		r, err = c.binary(&node{kind: nBinary, pos: s.pos, op: strings.TrimSuffix(s.op, "="), args: []*node{cur, r}})
		if err != nil {
			return err
		}
		s.op = "="
	}
	s.rhs = convert(r, v.typ)
	s.v = v
	v.set = true
	return nil
}

// ifStmt checks an if statement. Each branch is a scope of its own (its
// declarations end with it), and a local is given a value by the if when
// both branches give it one.
func (c *checker) ifStmt(s *stmt) error {
	cond, err := c.expr(s.cond)
	if err != nil {
		return err
	}
	s.cond = convert(cond, Bool)
	outer := make(map[string]*variable, len(c.vars))
	setBefore := map[*variable]bool{}
	for name, v := range c.vars {
		outer[name] = v
		setBefore[v] = v.set
	}
	setAfter := map[*variable]bool{}
	for k, branch := range [][]*stmt{s.then, s.els} {
		c.vars = make(map[string]*variable, len(outer))
		for name, v := range outer {
			c.vars[name] = v
			v.set = setBefore[v]
		}
		if err := c.check(branch); err != nil {
			return err
		}
		for _, v := range outer {
			if k == 0 {
				setAfter[v] = v.set
			} else {
				setAfter[v] = setAfter[v] && v.set
			}
		}
	}
	c.vars = outer
	for _, v := range outer {
		v.set = setAfter[v]
	}
	return nil
}

// checkName rejects local names the generated code or C++ reserves.
func checkName(p Pos, name string) error {
	switch {
	case strings.HasPrefix(name, "_"):
		return errorf(p, "name %s starts with _, which is reserved for the generated code", name)
	case reserved[name], funcs[name] != nil:
		return errorf(p, "name %s is reserved (a C++ keyword, a CUDA built-in or a math function)", name)
	}
	return nil
}

var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`alignas alignof and asm auto bool break case catch char char16_t char32_t class
		const constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit
		export extern false float for friend goto if inline int long mutable namespace new noexcept not
		nullptr operator or private protected public register reinterpret_cast return short signed sizeof
		static static_assert static_cast struct switch template this thread_local throw true try typedef
		typeid typename union unsigned using virtual void volatile wchar_t while xor
		blockIdx blockDim threadIdx gridDim warpSize
		float32 float64 int32 int64 uint8 uint32 uint64 std`) {
		reserved[w] = true
	}
}

func (c *checker) unknown(p Pos, name string) error {
	var names []string
	for n := range c.vars {
		names = append(names, n)
	}
	msg := fmt.Sprintf("unknown name %s; the body's names are %s", name, strings.Join(sortedStrings(names), ", "))
	if s := suggest.Nearest(name, names); s != "" {
		msg = fmt.Sprintf("unknown name %s (did you mean %s?); the body's names are %s", name, s, strings.Join(sortedStrings(names), ", "))
	}
	return errorf(p, "%s", msg)
}

// convert wraps n in a conversion to t where its type differs.
func convert(n *node, t Type) *node {
	if n.typ == t {
		return n
	}
	return &node{kind: nConvert, pos: n.pos, typ: t, cast: t, implicit: true, args: []*node{n}}
}

func (c *checker) expr(n *node) (*node, error) {
	switch n.kind {
	case nLit:
		return n, nil
	case nIdent:
		v, ok := c.vars[n.op]
		if !ok {
			return nil, c.unknown(n.pos, n.op)
		}
		if v.kind == vLocal && !v.set {
			return nil, errorf(n.pos, "%s is read before it is given a value", n.op)
		}
		n.v, n.typ = v, v.typ
		return n, nil
	case nUnary:
		x, err := c.expr(n.args[0])
		if err != nil {
			return nil, err
		}
		switch n.op {
		case "!":
			n.args[0], n.typ = convert(x, Bool), Bool
		case "~":
			if x.typ.isFloat() {
				return nil, errorf(n.pos, "~ takes an integer; the operand is %s", x.typ.CName())
			}
			n.typ = promote(x.typ)
			n.args[0] = convert(x, n.typ)
		default: // - +
			n.typ = promote(x.typ)
			n.args[0] = convert(x, n.typ)
		}
		return n, nil
	case nBinary:
		for j, a := range n.args {
			x, err := c.expr(a)
			if err != nil {
				return nil, err
			}
			n.args[j] = x
		}
		return c.binary(n)
	case nCond:
		for j, a := range n.args {
			x, err := c.expr(a)
			if err != nil {
				return nil, err
			}
			n.args[j] = x
		}
		n.args[0] = convert(n.args[0], Bool)
		a, b := n.args[1], n.args[2]
		n.typ = a.typ
		if a.typ != b.typ {
			n.typ = common(a.typ, b.typ)
		}
		n.args[1], n.args[2] = convert(a, n.typ), convert(b, n.typ)
		return n, nil
	case nConvert:
		x, err := c.expr(n.args[0])
		if err != nil {
			return nil, err
		}
		n.typ = n.cast
		if x.typ == n.cast && x.kind == nConvert {
			// (float)(float)x: one conversion is enough.
			return x, nil
		}
		n.args[0] = x
		return n, nil
	case nCall:
		return c.call(n)
	}
	return nil, errorf(n.pos, "internal error: node kind %d", n.kind)
}

// binary types a binary operation whose operands are typed.
func (c *checker) binary(n *node) (*node, error) {
	a, b := n.args[0], n.args[1]
	intOnly := func() error {
		if a.typ.isFloat() || b.typ.isFloat() {
			return errorf(n.pos, "%s takes integers; the operands are %s and %s (fmod gives a float remainder)", n.op, a.typ.CName(), b.typ.CName())
		}
		return nil
	}
	switch n.op {
	case "&&", "||":
		n.typ = Bool
		n.args[0], n.args[1] = convert(a, Bool), convert(b, Bool)
		return n, nil
	case "<<", ">>":
		if err := intOnly(); err != nil {
			return nil, err
		}
		n.typ = promote(a.typ)
		n.args[0], n.args[1] = convert(a, n.typ), convert(b, promote(b.typ))
		return n, nil
	case "%", "&", "|", "^":
		if err := intOnly(); err != nil {
			return nil, err
		}
	}
	t := common(a.typ, b.typ)
	n.args[0], n.args[1] = convert(a, t), convert(b, t)
	switch n.op {
	case "==", "!=", "<", "<=", ">", ">=":
		n.typ = Bool
	default:
		n.typ = t
	}
	return n, nil
}

func (c *checker) call(n *node) (*node, error) {
	f, ok := funcs[n.op]
	if !ok {
		msg := fmt.Sprintf("unknown function %s", n.op)
		if s := suggest.Nearest(n.op, funcNames()); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		if _, isVar := c.vars[n.op]; isVar {
			msg = fmt.Sprintf("%s is a variable, not a function", n.op)
		}
		return nil, errorf(n.pos, "%s; the functions are %s", msg, strings.Join(funcNames(), ", "))
	}
	if len(n.args) != f.nargs {
		return nil, errorf(n.pos, "%s takes %d argument%s, not %d", n.op, f.nargs, map[bool]string{true: "s"}[f.nargs != 1], len(n.args))
	}
	for j, a := range n.args {
		x, err := c.expr(a)
		if err != nil {
			return nil, err
		}
		n.args[j] = x
	}
	n.fn = f
	allFloat := true
	for _, a := range n.args {
		allFloat = allFloat && a.typ == Float32
	}
	var t Type
	switch f.kind {
	case fkFloatF:
		t = Float32
	case fkFloat, fkClass:
		// C++ <cmath>: the float overload takes floats only; a double or an
		// integer argument makes the call double.
		t = Float64
		if allFloat {
			t = Float32
		}
	case fkAbs:
		a := n.args[0].typ
		switch {
		case a.isFloat():
			t = a
		case a == Uint32 || a == Uint64:
			return nil, errorf(n.pos, "abs of %s is ambiguous in C++ (an unsigned value is its own absolute value)", a.CName())
		default:
			t = promote(a)
		}
	case fkMinMax:
		t = common(n.args[0].typ, n.args[1].typ)
	}
	for j, a := range n.args {
		n.args[j] = convert(a, t)
	}
	n.typ = t
	if f.kind == fkClass {
		n.typ = Bool
	}
	return n, nil
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
