//go:build cgo && linux

package libloadtest

/*
#cgo CFLAGS: -I${SRCDIR}/..
// A symbol table on libm, for the binding's own tests: two required
// entry points and an optional one that no library exports.
#define CL_SYMBOLS(FN) \
FN(double, cos, (double)) \
FN(double, sqrt, (double))
#define CL_OPTIONAL(FN) \
FN(int, gocuda_no_such_symbol, (void))
#include "cudalib.h"

static double lt_cos(double x) { return p_cos(x); }
static int lt_has_optional(void) { return p_gocuda_no_such_symbol != 0; }
*/
import "C"

// Install is cudalib.h's cl_install for a table of libm's cos and sqrt
// and an optional symbol no library exports: the first required symbol
// h lacks, or "".
func Install(h uintptr) string { return C.GoString(C.cl_install(C.uintptr_t(h))) }

// Cos calls cos through the table Install filled.
func Cos(x float64) float64 { return float64(C.lt_cos(C.double(x))) }

// HasOptional says whether Install found the optional symbol.
func HasOptional() bool { return C.lt_has_optional() != 0 }
