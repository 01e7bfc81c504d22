package elemexpr

import (
	"fmt"
	"math"
)

func sqrt(x float64) float64 { return math.Sqrt(x) }
func abs(x float64) float64  { return math.Abs(x) }

// chunk is how many elements each operation takes at a time: enough that
// the per-operation overhead (a closure call) vanishes, few enough that a
// body's temporaries stay in the first-level cache.
const chunk = 512

type regKind uint8

const (
	rVec      regKind = iota // a temporary vector of chunk elements
	rScalar                  // a temporary of one element (uniform over the elements)
	rConst                   // a literal
	rInScalar                // a scalar input
	rInVec                   // an array input: a view of the caller's slice
	rOutVec                  // an output: a view of the caller's slice
	rIndex                   // i, per element
	rCount                   // n
)

type reg struct {
	typ   Type
	kind  regKind
	param int     // rInScalar, rInVec, rOutVec: the parameter's index
	ival  uint64  // rConst: an integer's bits
	fval  float64 // rConst: a float
}

func (r reg) scalar() bool {
	return r.kind == rScalar || r.kind == rConst || r.kind == rInScalar || r.kind == rCount
}

type mkFunc func(f *frame, o *op) func(m int)

// op is one operation of the plan: dst from src, made into a closure over
// a frame's buffers by mk.
type op struct {
	dst int
	src []int
	mk  mkFunc
	mul bool // a product, which a following sum may fuse with
}

// plan is a body compiled for one combination of scalar and array inputs:
// registers and operations in order.
type plan struct {
	regs   []reg
	ops    []op
	in     []int // per input: its register (rInScalar or rInVec)
	outVec []int // per output: its rOutVec register
	index  int   // the rIndex register, or -1
	count  int   // the rCount register, or -1
}

// frame is one evaluation's buffers and a plan's ops bound to them.
type frame struct {
	p    *plan
	regs []any // *[]T per register
	ops  []func(m int)
}

func (f *frame) scalar(r int) bool { return f.p.regs[r].scalar() }

func get[T any](f *frame, r int) *[]T { return f.regs[r].(*[]T) }

func (p *plan) newReg(r reg) int {
	p.regs = append(p.regs, r)
	return len(p.regs) - 1
}

type compiler struct {
	p   *plan
	cur map[*variable]int // each variable's register now
}

// compilePlan turns checked statements into a plan for inputs that are
// scalars where scalarIn says so and arrays elsewhere.
func compilePlan(in, out []*variable, stmts []*stmt, scalarIn []bool) *plan {
	p := &plan{index: -1, count: -1}
	c := &compiler{p: p, cur: map[*variable]int{}}
	for j, v := range in {
		k := rInVec
		if scalarIn[j] {
			k = rInScalar
		}
		p.in = append(p.in, p.newReg(reg{typ: v.typ, kind: k, param: j}))
		c.cur[v] = p.in[j]
	}
	for j, v := range out {
		p.outVec = append(p.outVec, p.newReg(reg{typ: v.typ, kind: rOutVec, param: j}))
	}
	c.stmts(stmts)
	final := make([]int, len(out))
	for j, v := range out {
		r, ok := c.cur[v]
		if !ok {
			r = c.constant(v.typ, 0, 0) // an output never set is 0
		}
		final[j] = r
	}
	c.finish(final)
	return p
}

// finish stores the outputs' final values. Where it is safe, the op that
// computes an output writes straight into the output's slice instead of a
// temporary: when nothing after it reads an input array (an output may be
// an input's memory, in place) and no other output shares its value.
func (c *compiler) finish(final []int) {
	p := c.p
	uses := map[int]int{}
	for _, r := range final {
		uses[r]++
	}
	lastInRead := -1
	for k, o := range p.ops {
		for _, s := range o.src {
			if p.regs[s].kind == rInVec {
				lastInRead = k
			}
		}
	}
	for _, r := range final {
		if p.regs[r].kind == rInVec {
			lastInRead = len(p.ops) // its store reads the input at the end
		}
	}
	var stores []int
	for j, r := range final {
		out := p.outVec[j]
		producer := -1
		for k := range p.ops {
			if p.ops[k].dst == r {
				producer = k
			}
		}
		if p.regs[r].kind == rVec && uses[r] == 1 && producer >= lastInRead && producer >= 0 {
			p.ops[producer].dst = out
			for k := producer + 1; k < len(p.ops); k++ {
				for x, s := range p.ops[k].src {
					if s == r {
						p.ops[k].src[x] = out
					}
				}
			}
			continue
		}
		stores = append(stores, j)
	}
	for _, j := range stores {
		c.emit(p.outVec[j], mkStore(p.regs[final[j]].typ), final[j])
	}
}

func (c *compiler) stmts(stmts []*stmt) {
	for _, s := range stmts {
		switch {
		case s.isIf:
			c.ifStmt(s)
		case s.rhs != nil:
			c.cur[s.v] = c.expr(s.rhs)
		}
	}
}

// ifStmt computes both branches and then, for each variable either sets,
// selects its value by the condition: the same values as C's branch,
// since a body has no side effects (an integer division by zero in the
// branch not taken gives 0 and is dropped).
func (c *compiler) ifStmt(s *stmt) {
	cond := c.expr(s.cond)
	before := c.cur
	var results []map[*variable]int
	for _, branch := range [][]*stmt{s.then, s.els} {
		c.cur = make(map[*variable]int, len(before))
		for v, r := range before {
			c.cur[v] = r
		}
		c.stmts(branch)
		results = append(results, c.cur)
	}
	c.cur = before
	declared := map[*variable]bool{}
	for _, v := range assignedIn(append(append([]*stmt{}, s.then...), s.els...), declared) {
		if declared[v] {
			continue // the branch's own local
		}
		old, had := before[v]
		if !had && v.kind == vOutput {
			old, had = c.constant(v.typ, 0, 0), true
		}
		r1, ok1 := results[0][v]
		r2, ok2 := results[1][v]
		if !ok1 {
			r1, ok1 = old, had
		}
		if !ok2 {
			r2, ok2 = old, had
		}
		switch {
		case !ok1 || !ok2:
			// Set on one path only, and unset before: the checker lets no
			// one read it until it is set on every path.
		case r1 == r2:
			c.cur[v] = r1
		default:
			c.cur[v] = c.emit(c.dst(v.typ, cond, r1, r2), mkSelect(v.typ), cond, r1, r2)
		}
	}
}

// assignedIn lists the variables that stmts set, in order, and marks in
// declared those they declare.
func assignedIn(stmts []*stmt, declared map[*variable]bool) []*variable {
	var out []*variable
	seen := map[*variable]bool{}
	var walk func([]*stmt)
	walk = func(ss []*stmt) {
		for _, s := range ss {
			switch {
			case s.isIf:
				walk(s.then)
				walk(s.els)
			case s.decl:
				declared[s.v] = true
			}
			if s.v != nil && !seen[s.v] {
				seen[s.v] = true
				out = append(out, s.v)
			}
		}
	}
	walk(stmts)
	return out
}

func (c *compiler) constant(t Type, iv uint64, fv float64) int {
	return c.p.newReg(reg{typ: t, kind: rConst, ival: iv, fval: fv})
}

// dst is the register an operation on srcs writes: a scalar if every
// source is one.
func (c *compiler) dst(t Type, srcs ...int) int {
	for _, s := range srcs {
		if !c.p.regs[s].scalar() {
			return c.p.newReg(reg{typ: t, kind: rVec})
		}
	}
	return c.p.newReg(reg{typ: t, kind: rScalar})
}

func (c *compiler) emit(dst int, mk mkFunc, src ...int) int {
	c.p.ops = append(c.p.ops, op{dst: dst, src: src, mk: mk})
	return dst
}

func (c *compiler) expr(n *node) int {
	switch n.kind {
	case nLit:
		return c.constant(n.typ, n.ival, n.fval)
	case nIdent:
		v := n.v
		if r, ok := c.cur[v]; ok {
			return r
		}
		switch v.kind {
		case vOutput:
			return c.constant(v.typ, 0, 0) // an output is 0 until set
		case vIndex:
			if c.p.index < 0 {
				c.p.index = c.p.newReg(reg{typ: Int64, kind: rIndex})
			}
			return c.p.index
		case vCount:
			if c.p.count < 0 {
				c.p.count = c.p.newReg(reg{typ: Int64, kind: rCount})
			}
			return c.p.count
		}
		panic("elemexpr: unset variable " + v.name) // the checker refuses those
	case nUnary:
		a := c.expr(n.args[0])
		switch n.op {
		case "-":
			return c.emit(c.dst(n.typ, a), mkNeg(n.typ), a)
		case "~":
			return c.emit(c.dst(n.typ, a), mkBitNot(n.typ), a)
		case "!":
			return c.emit(c.dst(Bool, a), mkLNot, a)
		}
		return a // +
	case nBinary:
		a, b := c.expr(n.args[0]), c.expr(n.args[1])
		return c.binary(n.op, n.args[0].typ, n.args[1].typ, n.typ, a, b)
	case nCond:
		cond, a, b := c.expr(n.args[0]), c.expr(n.args[1]), c.expr(n.args[2])
		return c.emit(c.dst(n.typ, cond, a, b), mkSelect(n.typ), cond, a, b)
	case nConvert:
		a := c.expr(n.args[0])
		from := n.args[0].typ
		if from == n.typ {
			return a
		}
		return c.emit(c.dst(n.typ, a), mkConv(from, n.typ), a)
	case nCall:
		srcs := make([]int, len(n.args))
		scalarAll := true
		for j, a := range n.args {
			srcs[j] = c.expr(a)
			scalarAll = scalarAll && c.p.regs[srcs[j]].scalar()
		}
		if !scalarAll {
			for j := range srcs {
				srcs[j] = c.splat(srcs[j])
			}
		}
		return c.emit(c.dst(n.typ, srcs...), mkCall(n.fn, n.args[0].typ), srcs...)
	}
	panic(fmt.Sprintf("elemexpr: cannot compile node kind %d", n.kind))
}

// fuseMulAdd turns prod + c into one pass when prod is the vector product
// the last op made and nothing else reads it (no variable holds it).
func (c *compiler) fuseMulAdd(t Type, prod, addend int) (int, bool) {
	ops := c.p.ops
	if len(ops) == 0 || !ops[len(ops)-1].mul || ops[len(ops)-1].dst != prod || prod == addend {
		return 0, false
	}
	for _, r := range c.cur {
		if r == prod {
			return 0, false
		}
	}
	last := &ops[len(ops)-1]
	x, y := last.src[0], last.src[1]
	if c.p.regs[x].scalar() {
		x, y = y, x // the vector first
	}
	*last = op{dst: prod, src: []int{x, y, addend}, mk: mkMadd(t)}
	return prod, true
}

// splat makes a vector of a scalar register, for the operations that have
// only the vector-vector loop.
func (c *compiler) splat(r int) int {
	if !c.p.regs[r].scalar() {
		return r
	}
	t := c.p.regs[r].typ
	return c.emit(c.p.newReg(reg{typ: t, kind: rVec}), mkSplat(t), r)
}

func (c *compiler) binary(opName string, argT, countT, t Type, a, b int) int {
	if opName == "+" {
		if r, ok := c.fuseMulAdd(t, a, b); ok {
			return r
		}
		if r, ok := c.fuseMulAdd(t, b, a); ok {
			return r
		}
	}
	if opName == "*" && (!c.p.regs[a].scalar() || !c.p.regs[b].scalar()) {
		c.emit(c.dst(t, a, b), mkBinary(opName, argT), a, b)
		c.p.ops[len(c.p.ops)-1].mul = true
		return c.p.ops[len(c.p.ops)-1].dst
	}
	switch opName {
	case "+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">=", "&&", "||":
		return c.emit(c.dst(t, a, b), mkBinary(opName, argT), a, b)
	}
	// %, &, |, ^, <<, >>: the vector-vector loop only.
	if c.p.regs[a].scalar() != c.p.regs[b].scalar() {
		a, b = c.splat(a), c.splat(b)
	}
	if opName == "<<" || opName == ">>" {
		return c.emit(c.dst(t, a, b), mkShift(opName, argT, countT), a, b)
	}
	return c.emit(c.dst(t, a, b), mkBinary(opName, argT), a, b)
}
