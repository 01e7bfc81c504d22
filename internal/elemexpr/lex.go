package elemexpr

import (
	"fmt"
	"strings"
)

// Pos is a place in a body: line and column (in bytes), both from 1.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is a body that does not parse or type-check: where, and what.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

func errorf(p Pos, format string, a ...any) *Error {
	return &Error{p, fmt.Sprintf(format, a...)}
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tPunct
)

type token struct {
	kind tokKind
	text string
	pos  Pos
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "the end of the body"
	case tIdent:
		return fmt.Sprintf("identifier %q", t.text)
	case tNumber:
		return fmt.Sprintf("number %s", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// puncts are C's operators and punctuation that a body may hold, longest
// first so that the lexer takes "<<=" before "<<" before "<".
var puncts = []string{
	"<<=", ">>=",
	"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--", "::", "->",
	"+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|", "^", "?", ":", "(", ")", ";", ",", "{", "}", "[", "]", ".",
}

// lex splits a body into tokens, dropping spaces and comments.
func lex(src string) ([]token, error) {
	var toks []token
	line, col := 1, 1
	adv := func(n int) {
		for _, c := range src[:n] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		src = src[n:]
	}
	for len(src) > 0 {
		c := src[0]
		pos := Pos{line, col}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			adv(1)
		case strings.HasPrefix(src, "//"):
			n := strings.IndexByte(src, '\n')
			if n < 0 {
				n = len(src)
			}
			adv(n)
		case strings.HasPrefix(src, "/*"):
			n := strings.Index(src[2:], "*/")
			if n < 0 {
				return nil, errorf(pos, "comment /* is not closed with */")
			}
			adv(n + 4)
		case isLetter(c):
			n := 1
			for n < len(src) && (isLetter(src[n]) || isDigit(src[n])) {
				n++
			}
			toks = append(toks, token{tIdent, src[:n], pos})
			adv(n)
		case isDigit(c) || (c == '.' && len(src) > 1 && isDigit(src[1])):
			n := numberLen(src)
			toks = append(toks, token{tNumber, src[:n], pos})
			adv(n)
		default:
			found := false
			for _, p := range puncts {
				if strings.HasPrefix(src, p) {
					toks = append(toks, token{tPunct, p, pos})
					adv(len(p))
					found = true
					break
				}
			}
			if !found {
				r := []rune(src)[0]
				switch r {
				case '\'', '"':
					return nil, errorf(pos, "character and string literals are not accepted; a body holds numbers, names, operators and calls")
				case '#':
					return nil, errorf(pos, "preprocessor lines (#) are not accepted in a body; put them in the kernel's preamble")
				}
				return nil, errorf(pos, "unexpected character %q; a body holds numbers, names, operators (+ - * / %% << >> < > == != & ^ | && || ! ~ ?:), parentheses and ;", r)
			}
		}
	}
	toks = append(toks, token{tEOF, "", Pos{line, col}})
	return toks, nil
}

func isLetter(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// numberLen is the length of the C number at the start of s: as C's
// preprocessing number, digits, letters, _, ., ' and an exponent's sign.
func numberLen(s string) int {
	n := 1
	for n < len(s) {
		c := s[n]
		switch {
		case isDigit(c) || isLetter(c) || c == '.' || c == '\'':
			n++
		case (c == '+' || c == '-') && strings.ContainsRune("eEpP", rune(s[n-1])) && !(s[n-1] == 'e' || s[n-1] == 'E') == isHex(s):
			n++
		default:
			return n
		}
	}
	return n
}

func isHex(s string) bool { return len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }
