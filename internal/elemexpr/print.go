package elemexpr

import (
	"strings"
)

// Body is the body as CUDA C++ statements, one a line, typed as the
// checker typed them: every conversion it inserted is an explicit cast,
// every call names the overload it chose (sqrtf for a float, sqrt of a
// double argument otherwise), compound assignments are spelt out and
// locals are declared with their C types. NVRTC compiling it computes what
// Eval computes. Inputs, outputs, i and n are the function's parameters
// (see Function).
func (e *Expr) Body() string {
	var b strings.Builder
	printStmts(&b, e.stmts, "")
	return b.String()
}

func printStmts(b *strings.Builder, stmts []*stmt, indent string) {
	for _, s := range stmts {
		b.WriteString(indent)
		switch {
		case s.isIf:
			b.WriteString("if (")
			printExpr(b, s.cond)
			b.WriteString(") {\n")
			printStmts(b, s.then, indent+"  ")
			b.WriteString(indent + "}")
			if len(s.els) > 0 {
				b.WriteString(" else {\n")
				printStmts(b, s.els, indent+"  ")
				b.WriteString(indent + "}")
			}
			b.WriteString("\n")
			continue
		case s.decl:
			if s.isConst {
				b.WriteString("const ")
			}
			b.WriteString(s.declTy.CName() + " " + s.name)
			if s.rhs != nil {
				b.WriteString(" = ")
				printExpr(b, s.rhs)
			}
		default:
			b.WriteString(s.name + " = ")
			printExpr(b, s.rhs)
		}
		b.WriteString(";\n")
	}
}

// Function is the body as a C++ function: qualifiers (such as
// "__device__ __forceinline__", or "static inline" for a host compiler),
// void name(const long long i, const long long n, the inputs as const
// values, the outputs as references). The outputs are set to 0 first, as
// gocuda's kernels hand the body outputs initialized to 0.
func (e *Expr) Function(qualifiers, name string) string {
	var ps []string
	ps = append(ps, "const long long i", "const long long n")
	for _, v := range e.in {
		ps = append(ps, "const "+v.typ.CName()+" "+v.name)
	}
	for _, v := range e.out {
		ps = append(ps, v.typ.CName()+"& "+v.name)
	}
	var b strings.Builder
	if qualifiers != "" {
		b.WriteString(qualifiers + " ")
	}
	b.WriteString("void " + name + "(" + strings.Join(ps, ", ") + ") {\n")
	b.WriteString("  (void)i;\n  (void)n;\n")
	for _, v := range e.out {
		b.WriteString("  " + v.name + " = 0;\n")
	}
	for _, line := range strings.SplitAfter(e.Body(), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func printExpr(b *strings.Builder, n *node) {
	switch n.kind {
	case nLit:
		b.WriteString(n.text)
	case nIdent:
		b.WriteString(n.op)
	case nUnary:
		b.WriteString("(" + n.op)
		printExpr(b, n.args[0])
		b.WriteString(")")
	case nBinary:
		b.WriteString("(")
		printExpr(b, n.args[0])
		b.WriteString(" " + n.op + " ")
		printExpr(b, n.args[1])
		b.WriteString(")")
	case nCond:
		b.WriteString("(")
		printExpr(b, n.args[0])
		b.WriteString(" ? ")
		printExpr(b, n.args[1])
		b.WriteString(" : ")
		printExpr(b, n.args[2])
		b.WriteString(")")
	case nConvert:
		b.WriteString("((" + n.typ.CName() + ")")
		printExpr(b, n.args[0])
		b.WriteString(")")
	case nCall:
		b.WriteString(callName(n) + "(")
		for j, a := range n.args {
			if j > 0 {
				b.WriteString(", ")
			}
			printExpr(b, a)
		}
		b.WriteString(")")
	}
}

// callName is the name that calls the overload the checker chose, without
// relying on C++ overloading: the f-suffixed name for float, the plain one
// for double, and for integers abs or llabs, min or max (CUDA's integer
// overloads, the arguments cast to one type).
func callName(n *node) string {
	f := n.fn
	t := n.args[0].typ
	switch f.kind {
	case fkClass:
		return f.name // isnan(float) and isnan(double) are CUDA's overloads
	case fkAbs:
		switch t {
		case Int32:
			return "abs"
		case Int64:
			return "llabs"
		}
	case fkMinMax:
		if !t.isFloat() {
			return f.name
		}
	}
	if t == Float32 {
		return f.base + "f"
	}
	return f.base
}
