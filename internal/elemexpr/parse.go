package elemexpr

type nodeKind uint8

const (
	nLit     nodeKind = iota // a number or true/false
	nIdent                   // a parameter, local, i or n
	nUnary                   // op args[0]
	nBinary                  // args[0] op args[1]
	nCond                    // args[0] ? args[1] : args[2]
	nCall                    // name(args)
	nConvert                 // (typ)args[0]: a cast, or a conversion the checker inserted
)

// node is an expression. The parser fills the syntax; the checker sets
// typ, resolves names and calls, and wraps operands in nConvert nodes
// where C converts them.
type node struct {
	kind nodeKind
	pos  Pos
	op   string // operator; a call's function as written
	text string // a literal as written
	args []*node
	typ  Type

	ival uint64  // integer literal's bits
	fval float64 // float literal's value
	v    *variable
	fn   *mathFunc // a call's function, resolved
	// cast is the written target of a cast (a type name, resolved);
	// implicit marks a conversion the checker inserted.
	cast     Type
	implicit bool
}

// stmt is one statement: a declaration of a local (decl, with init
// optional) or an assignment to a variable (op "=", "+=", ...).
type stmt struct {
	pos     Pos
	decl    bool
	name    string
	declTy  Type // for decl; Invalid means auto
	isConst bool
	op      string
	rhs     *node // nil for a declaration without initializer
	v       *variable
	// An if statement: cond, then the branches.
	isIf      bool
	cond      *node
	then, els []*stmt
}

type parser struct {
	toks   []token
	p      int
	tparam map[string]Type
	// params are the parameters' names: a parameter may be named as a type
	// of C's or Go's that bodies do not accept (half, int8, size_t), as
	// NVRTC allows, and is then a variable, never a type.
	params map[string]*variable
	depth  int // if statements open
}

func (ps *parser) peek() token { return ps.toks[ps.p] }
func (ps *parser) next() token {
	t := ps.toks[ps.p]
	if t.kind != tEOF {
		ps.p++
	}
	return t
}
func (ps *parser) is(text string) bool {
	t := ps.peek()
	return t.kind == tPunct && t.text == text
}
func (ps *parser) expect(text, what string) *Error {
	if !ps.is(text) {
		return errorf(ps.peek().pos, "expected %q %s, found %s", text, what, ps.peek())
	}
	ps.next()
	return nil
}

// typeWords are the C (and Go) names of the types a body may name.
var typeWords = map[string]Type{
	"float": Float32, "double": Float64, "int": Int32, "bool": Bool,
	"float32": Float32, "float64": Float64, "int32": Int32, "int64": Int64, "uint8": Uint8, "uint32": Uint32, "uint64": Uint64,
}

// badTypes are type names C has and bodies here do not, with what to use.
var badTypes = map[string]string{
	"char": "unsigned char", "short": "int", "half": "float", "__half": "float", "float16": "float",
	"size_t": "unsigned long long", "ptrdiff_t": "long long", "int8": "int", "int16": "int", "uint16": "unsigned int",
	"signed": "int", "void": "", "complex64": "", "complex128": "",
}

const typeList = "float, double, int, long long, long, unsigned char, unsigned int, unsigned long long, bool, the Go names float32, float64, int32, int64, uint8, uint32, uint64, bool, a type parameter bound by the caller, or auto in a declaration"

// startsType says whether the next token starts a type name.
func (ps *parser) startsType() bool {
	t := ps.peek()
	if t.kind != tIdent || ps.params[t.text] != nil {
		return false
	}
	_, ok := typeWords[t.text]
	_, bad := badTypes[t.text]
	_, tp := ps.tparam[t.text]
	return ok || bad || tp || t.text == "unsigned" || t.text == "long"
}

// parseType reads a type name.
func (ps *parser) parseType() (Type, *Error) {
	t := ps.next()
	if ty, ok := ps.tparam[t.text]; ok {
		return ty, nil
	}
	if ty, ok := typeWords[t.text]; ok {
		return ty, nil
	}
	switch t.text {
	case "long":
		if ps.peek().kind == tIdent && ps.peek().text == "long" {
			ps.next()
		}
		if ps.peek().kind == tIdent && ps.peek().text == "int" {
			ps.next()
		}
		if ps.peek().kind == tIdent && ps.peek().text == "double" {
			return 0, errorf(t.pos, "long double is not accepted; write double")
		}
		return Int64, nil
	case "unsigned":
		nt := ps.peek()
		if nt.kind == tIdent {
			switch nt.text {
			case "char":
				ps.next()
				return Uint8, nil
			case "int":
				ps.next()
				return Uint32, nil
			case "long":
				ps.next()
				if ps.peek().kind == tIdent && ps.peek().text == "long" {
					ps.next()
				}
				if ps.peek().kind == tIdent && ps.peek().text == "int" {
					ps.next()
				}
				return Uint64, nil
			case "short":
				return 0, errorf(nt.pos, "unsigned short is not accepted; write unsigned int")
			}
		}
		return Uint32, nil
	}
	if use, ok := badTypes[t.text]; ok {
		if use != "" {
			return 0, errorf(t.pos, "type %s is not accepted here; write %s (types: %s)", t.text, use, typeList)
		}
		return 0, errorf(t.pos, "type %s is not accepted here (types: %s)", t.text, typeList)
	}
	return 0, errorf(t.pos, "expected a type, found %s (types: %s)", t, typeList)
}

var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true}

var controlWords = map[string]bool{"if": true, "else": true, "for": true, "while": true, "do": true, "switch": true, "case": true, "return": true, "break": true, "continue": true, "goto": true}

// parseBody reads the statements of a body.
func parseBody(src string, tparam map[string]Type, params map[string]*variable) ([]*stmt, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	ps := &parser{toks: toks, tparam: tparam, params: params}
	out, perr := ps.stmts(false, Pos{})
	if perr != nil {
		return nil, perr
	}
	return out, nil
}

// stmts reads statements to the end of the body or, in a block opened at
// open, to its closing }.
func (ps *parser) stmts(block bool, open Pos) ([]*stmt, *Error) {
	var out []*stmt
	for {
		switch {
		case ps.peek().kind == tEOF && block:
			return nil, errorf(open, "block { is not closed with }")
		case ps.peek().kind == tEOF:
			return out, nil
		case block && ps.is("}"):
			ps.next()
			return out, nil
		case ps.is(";"):
			ps.next()
			continue
		}
		ss, compound, err := ps.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
		if compound || (!block && ps.peek().kind == tEOF) {
			continue
		}
		if err := ps.expect(";", "after a statement"); err != nil {
			return nil, err
		}
	}
}

// ifStatement reads if (cond) branch [else branch].
func (ps *parser) ifStatement() ([]*stmt, bool, *Error) {
	t := ps.next()
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > maxDepth {
		return nil, false, errorf(t.pos, "if statements nested more than %d deep", maxDepth)
	}
	if err := ps.expect("(", "after if"); err != nil {
		return nil, false, err
	}
	cond, err := ps.expr()
	if err != nil {
		return nil, false, err
	}
	if err := ps.expect(")", "closing if's condition"); err != nil {
		return nil, false, err
	}
	s := &stmt{pos: t.pos, isIf: true, cond: cond}
	if s.then, err = ps.branch(); err != nil {
		return nil, false, err
	}
	if nt := ps.peek(); nt.kind == tIdent && nt.text == "else" {
		ps.next()
		if s.els, err = ps.branch(); err != nil {
			return nil, false, err
		}
	}
	return []*stmt{s}, true, nil
}

// branch reads a branch of an if: a block, or one statement with its ;.
func (ps *parser) branch() ([]*stmt, *Error) {
	if ps.is("{") {
		return ps.stmts(true, ps.next().pos)
	}
	if ps.is(";") {
		ps.next()
		return nil, nil
	}
	ss, compound, err := ps.statement()
	if err != nil {
		return nil, err
	}
	if !compound && ps.peek().kind != tEOF {
		if err := ps.expect(";", "after a statement"); err != nil {
			return nil, err
		}
	}
	return ss, nil
}

// statement reads one statement; compound says it was an if, which needs
// no ; after it.
func (ps *parser) statement() ([]*stmt, bool, *Error) {
	ss, err := ps.simpleStatement()
	if err == errIsIf {
		return ps.ifStatement()
	}
	return ss, false, err
}

// errIsIf tells statement that an if starts here.
var errIsIf = &Error{}

func (ps *parser) simpleStatement() ([]*stmt, *Error) {
	t := ps.peek()
	switch {
	case t.kind == tIdent && t.text == "if":
		return nil, errIsIf
	case t.kind == tIdent && t.text == "else":
		return nil, errorf(t.pos, "else without an if before it")
	case t.kind == tIdent && controlWords[t.text]:
		return nil, errorf(t.pos, "%s statements are not accepted; a body is a sequence of assignments, declarations and if statements (or choose values with c ? a : b)", t.text)
	case t.kind == tPunct && t.text == "{":
		return nil, errorf(t.pos, "blocks { } are accepted only as the branches of an if")
	case t.kind == tPunct && (t.text == "++" || t.text == "--"):
		ps.next()
		id := ps.next()
		if id.kind != tIdent {
			return nil, errorf(id.pos, "expected a variable after %s, found %s", t.text, id)
		}
		return []*stmt{{pos: t.pos, name: id.text, op: t.text[:1] + "=", rhs: &node{kind: nLit, pos: t.pos, text: "1", typ: Int32, ival: 1}}}, nil
	case t.kind == tIdent && (t.text == "const" || t.text == "auto" || ps.startsType()):
		return ps.declaration()
	case t.kind == tIdent:
		nt := ps.toks[ps.p+1]
		if nt.kind == tPunct && assignOps[nt.text] {
			ps.next()
			ps.next()
			rhs, err := ps.expr()
			if err != nil {
				return nil, err
			}
			if ps.is(",") {
				return nil, errorf(ps.peek().pos, "the comma operator is not accepted; write one statement per value, separated by ;")
			}
			return []*stmt{{pos: t.pos, name: t.text, op: nt.text, rhs: rhs}}, nil
		}
		if nt.kind == tPunct && (nt.text == "++" || nt.text == "--") {
			ps.next()
			ps.next()
			return []*stmt{{pos: t.pos, name: t.text, op: nt.text[:1] + "=", rhs: &node{kind: nLit, pos: t.pos, text: "1", typ: Int32, ival: 1}}}, nil
		}
	}
	e, err := ps.expr()
	if err != nil {
		return nil, err
	}
	return nil, errorf(e.pos, "this expression is computed and dropped; a statement sets an output or a local, as in z = ... or float t = ...")
}

func (ps *parser) declaration() ([]*stmt, *Error) {
	isConst := false
	if ps.peek().text == "const" {
		ps.next()
		isConst = true
	}
	var ty Type
	if ps.peek().kind == tIdent && ps.peek().text == "auto" {
		ps.next()
	} else if ps.startsType() {
		var err *Error
		if ty, err = ps.parseType(); err != nil {
			return nil, err
		}
	} else {
		return nil, errorf(ps.peek().pos, "expected a type after const, found %s (types: %s)", ps.peek(), typeList)
	}
	if ps.peek().kind == tIdent && ps.peek().text == "const" {
		ps.next() // "float const t"
		isConst = true
	}
	var out []*stmt
	for {
		id := ps.next()
		if id.kind != tIdent {
			if id.kind == tPunct && (id.text == "*" || id.text == "&") {
				return nil, errorf(id.pos, "pointers and references are not accepted; declare a value: %s t = ...", ty.CName())
			}
			return nil, errorf(id.pos, "expected a name to declare, found %s", id)
		}
		s := &stmt{pos: id.pos, decl: true, name: id.text, declTy: ty, isConst: isConst}
		if ps.is("=") {
			ps.next()
			rhs, err := ps.expr()
			if err != nil {
				return nil, err
			}
			s.rhs = rhs
		} else if ps.is("(") || ps.is("{") || ps.is("[") {
			return nil, errorf(ps.peek().pos, "declare %s with = (as in float %s = x), not %s", id.text, id.text, ps.peek().text)
		}
		if s.rhs == nil && (ty == Invalid || isConst) {
			return nil, errorf(id.pos, "%s needs an initializer (= ...)", id.text)
		}
		out = append(out, s)
		if !ps.is(",") {
			return out, nil
		}
		ps.next()
	}
}

// Binary operators by precedence, loosest first (C's table).
var binLevels = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

// maxDepth bounds nesting, so that a hostile body cannot exhaust the stack.
const maxDepth = 200

func (ps *parser) expr() (*node, *Error) { return ps.cond(0) }

func (ps *parser) cond(depth int) (*node, *Error) {
	if depth > maxDepth {
		return nil, errorf(ps.peek().pos, "expression nested more than %d deep", maxDepth)
	}
	c, err := ps.binary(0, depth)
	if err != nil {
		return nil, err
	}
	if !ps.is("?") {
		return c, nil
	}
	q := ps.next()
	a, err := ps.cond(depth + 1)
	if err != nil {
		return nil, err
	}
	if err := ps.expect(":", "in c ? a : b"); err != nil {
		return nil, err
	}
	b, err := ps.cond(depth + 1)
	if err != nil {
		return nil, err
	}
	return &node{kind: nCond, pos: q.pos, op: "?:", args: []*node{c, a, b}}, nil
}

func (ps *parser) binary(level, depth int) (*node, *Error) {
	if level == len(binLevels) {
		return ps.unary(depth)
	}
	l, err := ps.binary(level+1, depth)
	if err != nil {
		return nil, err
	}
	for {
		t := ps.peek()
		if t.kind != tPunct || !contains(binLevels[level], t.text) {
			return l, nil
		}
		ps.next()
		r, err := ps.binary(level+1, depth)
		if err != nil {
			return nil, err
		}
		l = &node{kind: nBinary, pos: t.pos, op: t.text, args: []*node{l, r}}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (ps *parser) unary(depth int) (*node, *Error) {
	if depth > maxDepth {
		return nil, errorf(ps.peek().pos, "expression nested more than %d deep", maxDepth)
	}
	t := ps.peek()
	if t.kind == tPunct {
		switch t.text {
		case "-", "+", "!", "~":
			ps.next()
			x, err := ps.unary(depth + 1)
			if err != nil {
				return nil, err
			}
			return &node{kind: nUnary, pos: t.pos, op: t.text, args: []*node{x}}, nil
		case "++", "--":
			return nil, errorf(t.pos, "%s inside an expression is not accepted; write x += 1 as its own statement", t.text)
		case "*", "&":
			return nil, errorf(t.pos, "pointers (unary %s) are not accepted; a body computes with values", t.text)
		case "(":
			// A cast if a type name follows.
			save := ps.p
			ps.next()
			if ps.startsType() {
				ty, err := ps.parseType()
				if err != nil {
					return nil, err
				}
				if err := ps.expect(")", "closing the cast"); err != nil {
					return nil, err
				}
				x, err := ps.unary(depth + 1)
				if err != nil {
					return nil, err
				}
				return &node{kind: nConvert, pos: t.pos, cast: ty, args: []*node{x}}, nil
			}
			ps.p = save
		}
	}
	return ps.postfix(depth)
}

func (ps *parser) postfix(depth int) (*node, *Error) {
	x, err := ps.primary(depth)
	if err != nil {
		return nil, err
	}
	if t := ps.peek(); t.kind == tPunct {
		switch t.text {
		case "[":
			return nil, errorf(t.pos, "indexing [ ] is not accepted; each parameter is one element's value (write the kernel with NewKernel to index arrays)")
		case "++", "--":
			return nil, errorf(t.pos, "%s inside an expression is not accepted; write x += 1 as its own statement", t.text)
		case ".", "->":
			return nil, errorf(t.pos, "member access %s is not accepted; values here are numbers", t.text)
		case "=":
			return nil, errorf(t.pos, "assignment inside an expression is not accepted; assign as a statement of its own")
		}
		if assignOps[t.text] {
			return nil, errorf(t.pos, "assignment %s inside an expression is not accepted; assign as a statement of its own", t.text)
		}
	}
	return x, nil
}

func (ps *parser) primary(depth int) (*node, *Error) {
	t := ps.peek()
	switch t.kind {
	case tNumber:
		ps.next()
		ty, iv, fv, err := parseNumber(t)
		if err != nil {
			return nil, err
		}
		return &node{kind: nLit, pos: t.pos, text: t.text, typ: ty, ival: iv, fval: fv}, nil
	case tIdent:
		switch t.text {
		case "true", "false":
			ps.next()
			n := &node{kind: nLit, pos: t.pos, text: t.text, typ: Bool}
			if t.text == "true" {
				n.ival = 1
			}
			return n, nil
		case "static_cast":
			ps.next()
			if err := ps.expect("<", "after static_cast"); err != nil {
				return nil, err
			}
			ty, err := ps.parseType()
			if err != nil {
				return nil, err
			}
			if err := ps.expect(">", "closing static_cast<...>"); err != nil {
				return nil, err
			}
			if err := ps.expect("(", "after static_cast<...>"); err != nil {
				return nil, err
			}
			x, err := ps.cond(depth + 1)
			if err != nil {
				return nil, err
			}
			if err := ps.expect(")", "closing static_cast"); err != nil {
				return nil, err
			}
			return &node{kind: nConvert, pos: t.pos, cast: ty, args: []*node{x}}, nil
		case "std":
			return nil, errorf(t.pos, "std:: is not accepted; call the CUDA math functions by their plain names (sqrt, exp, fmin, ...)")
		case "reinterpret_cast", "const_cast", "dynamic_cast", "sizeof", "new", "delete", "this", "nullptr":
			return nil, errorf(t.pos, "%s is not accepted in a body", t.text)
		}
		if ps.startsType() {
			// A functional cast: float(x).
			start := ps.p
			ty, err := ps.parseType()
			if err != nil {
				return nil, err
			}
			if !ps.is("(") {
				return nil, errorf(ps.peek().pos, "type %s where a value was expected; cast with (%s)x", ty.CName(), ty.CName())
			}
			if ps.p-start > 1 {
				// "unsigned int(x)" is not C++; a one-word name is.
				return nil, errorf(t.pos, "a functional cast takes a one-word type; write (%s)(x)", ty.CName())
			}
			ps.next()
			x, err := ps.cond(depth + 1)
			if err != nil {
				return nil, err
			}
			if err := ps.expect(")", "closing the cast"); err != nil {
				return nil, err
			}
			return &node{kind: nConvert, pos: t.pos, cast: ty, args: []*node{x}}, nil
		}
		ps.next()
		if ps.is("(") {
			ps.next()
			var args []*node
			for !ps.is(")") {
				a, err := ps.cond(depth + 1)
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if ps.is(",") {
					ps.next()
					continue
				}
				if !ps.is(")") {
					return nil, errorf(ps.peek().pos, "expected , or ) in the call of %s, found %s", t.text, ps.peek())
				}
			}
			ps.next()
			return &node{kind: nCall, pos: t.pos, op: t.text, args: args}, nil
		}
		return &node{kind: nIdent, pos: t.pos, op: t.text}, nil
	case tPunct:
		if t.text == "(" {
			ps.next()
			x, err := ps.cond(depth + 1)
			if err != nil {
				return nil, err
			}
			if err := ps.expect(")", "closing the parenthesis"); err != nil {
				return nil, err
			}
			return x, nil
		}
	}
	return nil, errorf(t.pos, "expected a value (a number, a name, a call, a cast or a parenthesis), found %s", t)
}
