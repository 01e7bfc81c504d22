package elemexpr

import (
	"math"
	"strconv"
	"strings"
)

// parseNumber reads a C number literal: its type and value (ints as the
// bits of a uint64, floats as a float64 holding the literal's value in its
// type, a float literal rounded straight to float).
func parseNumber(tok token) (Type, uint64, float64, *Error) {
	text := strings.ReplaceAll(tok.text, "'", "") // C++14 digit separators
	low := strings.ToLower(text)
	hex := strings.HasPrefix(low, "0x")
	isFloat := strings.ContainsAny(low, ".") || (!hex && strings.Contains(low, "e")) || (hex && strings.Contains(low, "p"))
	if isFloat {
		t := Float64
		num := text
		switch {
		case strings.HasSuffix(low, "f"):
			t, num = Float32, text[:len(text)-1]
		case strings.HasSuffix(low, "l"):
			return 0, 0, 0, errorf(tok.pos, "long double literal %s: long double is not accepted; write %s (double) or %sf (float)", tok.text, text[:len(text)-1], text[:len(text)-1])
		}
		if hex && !strings.Contains(strings.ToLower(num), "p") {
			return 0, 0, 0, errorf(tok.pos, "hexadecimal float %s needs an exponent (p), as in 0x1.8p1", tok.text)
		}
		bits := 64
		if t == Float32 {
			bits = 32
		}
		if strings.HasPrefix(num, ".") {
			num = "0" + num
		}
		if i := strings.IndexAny(num, "eE"); !hex && i > 0 && num[i-1] == '.' {
			num = num[:i-1] + num[i:] // "1.e5": Go wants a digit after the point
		}
		num = strings.TrimSuffix(num, ".")
		v, err := strconv.ParseFloat(num, bits)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !math.IsInf(v, 0) {
				return t, 0, v, nil // underflow to 0 or a denormal is C's value too
			} else if ok && ne.Err == strconv.ErrRange {
				return 0, 0, 0, errorf(tok.pos, "float literal %s is out of range for %s", tok.text, t.CName())
			}
			return 0, 0, 0, errorf(tok.pos, "malformed float literal %s; C floats are like 1.5, 1.5f, 2.f, .5, 1e-3, 0x1p-3", tok.text)
		}
		return t, 0, v, nil
	}
	// An integer: digits, then a suffix of u and l, ll in any order.
	end := len(low)
	for end > 0 && (low[end-1] == 'u' || low[end-1] == 'l') {
		end--
	}
	suffix := low[end:]
	digits := text[:end]
	var unsigned bool
	var long bool
	switch suffix {
	case "":
	case "u":
		unsigned = true
	case "l", "ll":
		long = true
	case "ul", "lu", "ull", "llu":
		unsigned, long = true, true
	default:
		return 0, 0, 0, errorf(tok.pos, "integer literal %s has suffix %q; C's are u, l, ll, ul, ull (or none)", tok.text, text[end:])
	}
	base := 10
	switch {
	case hex:
		base, digits = 16, digits[2:]
	case strings.HasPrefix(low, "0b"):
		base, digits = 2, digits[2:]
	case len(digits) > 1 && digits[0] == '0':
		base, digits = 8, digits[1:]
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil || digits == "" {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, 0, 0, errorf(tok.pos, "integer literal %s does not fit 64 bits", tok.text)
		}
		return 0, 0, 0, errorf(tok.pos, "malformed integer literal %s; C integers are like 10, 0x1f, 017 (octal), 0b101, 10u, 10ll", tok.text)
	}
	// C's rule: the first type of the list that holds the value; decimal
	// literals without u are signed only.
	var cands []Type
	switch {
	case base == 10 && !unsigned && !long:
		cands = []Type{Int32, Int64}
	case base == 10 && !unsigned:
		cands = []Type{Int64}
	case !unsigned && !long:
		cands = []Type{Int32, Uint32, Int64, Uint64}
	case !unsigned:
		cands = []Type{Int64, Uint64}
	case !long:
		cands = []Type{Uint32, Uint64}
	default:
		cands = []Type{Uint64}
	}
	for _, t := range cands {
		if v <= maxOf(t) {
			return t, v, 0, nil
		}
	}
	return 0, 0, 0, errorf(tok.pos, "integer literal %s does not fit %s; write it with a u suffix or as a double", tok.text, cands[len(cands)-1].CName())
}

// maxOf is the largest value of integer type t.
func maxOf(t Type) uint64 {
	switch t {
	case Bool:
		return 1
	case Uint8:
		return math.MaxUint8
	case Int32:
		return math.MaxInt32
	case Uint32:
		return math.MaxUint32
	case Int64:
		return math.MaxInt64
	}
	return math.MaxUint64
}
