package elemexpr

// Type is the C type of a value in a body. The element types of gocuda's
// arrays are Float32, Float64, Int32, Int64 and Uint8; Bool, Uint32 and
// Uint64 arise in bodies (comparisons, unsigned literals, casts) and may
// also be parameters.
type Type uint8

// The types, in the order of C's conversion ranks within each kind.
const (
	Invalid Type = iota
	Bool         // C++ bool
	Uint8        // unsigned char
	Int32        // int
	Uint32       // unsigned int
	Int64        // long long (and long: 64 bits where CUDA runs)
	Uint64       // unsigned long long
	Float32      // float
	Float64      // double
)

var typeInfo = [...]struct{ goName, cName string }{
	Invalid: {"invalid", "invalid"},
	Bool:    {"bool", "bool"},
	Uint8:   {"uint8", "unsigned char"},
	Int32:   {"int32", "int"},
	Uint32:  {"uint32", "unsigned int"},
	Int64:   {"int64", "long long"},
	Uint64:  {"uint64", "unsigned long long"},
	Float32: {"float32", "float"},
	Float64: {"float64", "double"},
}

// String is the type's Go name (float32, int64, ...).
func (t Type) String() string {
	if int(t) < len(typeInfo) {
		return typeInfo[t].goName
	}
	return "invalid"
}

// CName is the type's C name (float, long long, ...).
func (t Type) CName() string {
	if int(t) < len(typeInfo) {
		return typeInfo[t].cName
	}
	return "invalid"
}

// ParseType is the Type of a Go type name: bool, uint8, int32, uint32,
// int64, uint64, float32 or float64.
func ParseType(goName string) (Type, bool) {
	for t := Bool; t <= Float64; t++ {
		if typeInfo[t].goName == goName {
			return t, true
		}
	}
	return Invalid, false
}

func (t Type) isFloat() bool    { return t == Float32 || t == Float64 }
func (t Type) isUnsigned() bool { return t == Uint8 || t == Uint32 || t == Uint64 || t == Bool }
func (t Type) bits() int {
	switch t {
	case Bool, Uint8:
		return 8
	case Int32, Uint32, Float32:
		return 32
	}
	return 64
}

// promote is C's integral promotion: bool and unsigned char become int.
func promote(t Type) Type {
	if t == Bool || t == Uint8 {
		return Int32
	}
	return t
}

// common is the type of C's usual arithmetic conversions of a and b, for
// an LP64 target as CUDA's (long is long long's size, so treating long as
// long long gives the same results).
func common(a, b Type) Type {
	if a == Float64 || b == Float64 {
		return Float64
	}
	if a == Float32 || b == Float32 {
		return Float32
	}
	a, b = promote(a), promote(b)
	if a == b {
		return a
	}
	if a.isUnsigned() == b.isUnsigned() {
		return max(a, b) // same signedness: the greater rank
	}
	u, s := a, b
	if !u.isUnsigned() {
		u, s = b, a
	}
	if u.bits() >= s.bits() {
		return u // unsigned of rank at least the signed one's
	}
	return s // a signed type that holds every value of the unsigned one
}
