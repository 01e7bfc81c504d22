package elemexpr

import (
	"fmt"
	"math"
)

// The builders: each makes an operation's closure for a frame, with the
// loop chosen by the operand types (through generics, so that each loop
// is compiled for its type) and shapes (scalar or vector).

// byArith calls the generic builder for arithmetic type t.
func byArith(t Type, f32, f64, i32, u32, i64, u64 mkFunc) mkFunc {
	switch t {
	case Float32:
		return f32
	case Float64:
		return f64
	case Int32:
		return i32
	case Uint32:
		return u32
	case Int64:
		return i64
	case Uint64:
		return u64
	}
	panic(fmt.Sprintf("elemexpr: no arithmetic on %s", t))
}

// lim is the length an op runs: 1 for a scalar result.
func lim(f *frame, o *op) func(m int) int {
	if f.scalar(o.dst) {
		return func(int) int { return 1 }
	}
	return func(m int) int { return m }
}

func mkNeg(t Type) mkFunc {
	return byArith(t, mkNegT[float32], mkNegT[float64], mkNegT[int32], mkNegT[uint32], mkNegT[int64], mkNegT[uint64])
}

func mkNegT[T arith](f *frame, o *op) func(int) {
	po, pa, sd := get[T](f, o.dst), get[T](f, o.src[0]), f.scalar(o.dst)
	return func(m int) {
		if sd {
			m = 1
		}
		negV((*po)[:m], *pa)
	}
}

func mkBitNot(t Type) mkFunc {
	return byArith(t, nil, nil, mkBitNotT[int32], mkBitNotT[uint32], mkBitNotT[int64], mkBitNotT[uint64])
}

func mkBitNotT[T integer](f *frame, o *op) func(int) {
	po, pa, sd := get[T](f, o.dst), get[T](f, o.src[0]), f.scalar(o.dst)
	return func(m int) {
		if sd {
			m = 1
		}
		notV((*po)[:m], *pa)
	}
}

func mkLNot(f *frame, o *op) func(int) {
	po, pa, sd := get[bool](f, o.dst), get[bool](f, o.src[0]), f.scalar(o.dst)
	return func(m int) {
		if sd {
			m = 1
		}
		lnotV((*po)[:m], *pa)
	}
}

func mkSplat(t Type) mkFunc {
	return byType(t, mkSplatT[bool], mkSplatT[uint8], mkSplatT[int32], mkSplatT[uint32], mkSplatT[int64], mkSplatT[uint64], mkSplatT[float32], mkSplatT[float64])
}

func mkSplatT[T any](f *frame, o *op) func(int) {
	po, pa := get[T](f, o.dst), get[T](f, o.src[0])
	return func(m int) { fill((*po)[:m], (*pa)[0]) }
}

// mkStore copies a final value into an output's slice.
func mkStore(t Type) mkFunc {
	return byType(t, mkStoreT[bool], mkStoreT[uint8], mkStoreT[int32], mkStoreT[uint32], mkStoreT[int64], mkStoreT[uint64], mkStoreT[float32], mkStoreT[float64])
}

func mkStoreT[T any](f *frame, o *op) func(int) {
	po, pa := get[T](f, o.dst), get[T](f, o.src[0])
	if f.scalar(o.src[0]) {
		return func(m int) { fill((*po)[:m], (*pa)[0]) }
	}
	return func(m int) { copy((*po)[:m], *pa) }
}

func byType(t Type, b, u8, i32, u32, i64, u64, f32, f64 mkFunc) mkFunc {
	switch t {
	case Bool:
		return b
	case Uint8:
		return u8
	}
	return byArith(t, f32, f64, i32, u32, i64, u64)
}

// binLoops are an operation's three loops.
type binLoops[T, O any] struct {
	vv func(o []O, a, b []T)
	vs func(o []O, a []T, y T)
	sv func(o []O, x T, b []T)
}

func mkBin[T, O any](l binLoops[T, O]) mkFunc {
	return func(f *frame, o *op) func(int) {
		po, pa, pb := get[O](f, o.dst), get[T](f, o.src[0]), get[T](f, o.src[1])
		sa, sb := f.scalar(o.src[0]), f.scalar(o.src[1])
		switch {
		case sa && sb:
			return func(int) { l.vv((*po)[:1], *pa, *pb) }
		case sa:
			return func(m int) { l.sv((*po)[:m], (*pa)[0], *pb) }
		case sb:
			return func(m int) { l.vs((*po)[:m], *pa, (*pb)[0]) }
		}
		return func(m int) { l.vv((*po)[:m], *pa, *pb) }
	}
}

// commute is the sv loop of a commutative operation.
func commute[T, O any](vs func(o []O, a []T, y T)) func(o []O, x T, b []T) {
	return func(o []O, x T, b []T) { vs(o, b, x) }
}

func vvOnly[T, O any](vv func(o []O, a, b []T)) binLoops[T, O] {
	return binLoops[T, O]{vv: vv}
}

func mkBinary(opName string, t Type) mkFunc {
	if t == Bool {
		switch opName {
		case "&&":
			return mkBin(binLoops[bool, bool]{landVV[bool], landVS[bool], commute(landVS[bool])})
		case "||":
			return mkBin(binLoops[bool, bool]{lorVV[bool], lorVS[bool], commute(lorVS[bool])})
		}
	}
	switch opName {
	case "+", "-", "*", "==", "!=", "<", "<=", ">", ">=":
		return byArith(t, mkArith[float32](opName), mkArith[float64](opName), mkArith[int32](opName), mkArith[uint32](opName), mkArith[int64](opName), mkArith[uint64](opName))
	case "/":
		if t.isFloat() {
			return byArith(t, mkBin(binLoops[float32, float32]{fdivVV[float32], fdivVS[float32], fdivSV[float32]}),
				mkBin(binLoops[float64, float64]{fdivVV[float64], fdivVS[float64], fdivSV[float64]}), nil, nil, nil, nil)
		}
	}
	return byArith(t, nil, nil, mkInt[int32](opName), mkInt[uint32](opName), mkInt[int64](opName), mkInt[uint64](opName))
}

func mkArith[T arith](opName string) mkFunc {
	switch opName {
	case "+":
		return mkBin(binLoops[T, T]{addVV[T], addVS[T], commute(addVS[T])})
	case "-":
		return mkBin(binLoops[T, T]{subVV[T], subVS[T], subSV[T]})
	case "*":
		return mkBin(binLoops[T, T]{mulVV[T], mulVS[T], commute(mulVS[T])})
	case "==":
		return mkBin(binLoops[T, bool]{eqVV[T], eqVS[T], commute(eqVS[T])})
	case "!=":
		return mkBin(binLoops[T, bool]{neVV[T], neVS[T], commute(neVS[T])})
	case "<":
		return mkBin(binLoops[T, bool]{ltVV[T], ltVS[T], commute(gtVS[T])})
	case "<=":
		return mkBin(binLoops[T, bool]{leVV[T], leVS[T], commute(geVS[T])})
	case ">":
		return mkBin(binLoops[T, bool]{gtVV[T], gtVS[T], commute(ltVS[T])})
	case ">=":
		return mkBin(binLoops[T, bool]{geVV[T], geVS[T], commute(leVS[T])})
	}
	return nil
}

func mkInt[T integer](opName string) mkFunc {
	switch opName {
	case "/":
		return mkBin(binLoops[T, T]{idivVV[T], idivVS[T], idivSV[T]})
	case "%":
		return mkBin(vvOnly(imodVV[T]))
	case "&":
		return mkBin(vvOnly(andVV[T]))
	case "|":
		return mkBin(vvOnly(orVV[T]))
	case "^":
		return mkBin(vvOnly(xorVV[T]))
	}
	return nil
}

// mkShift is << or >> of a value of type t by a count of type ct.
func mkShift(opName string, t, ct Type) mkFunc {
	return byArith(t, nil, nil, mkShiftT[int32](opName, ct), mkShiftT[uint32](opName, ct), mkShiftT[int64](opName, ct), mkShiftT[uint64](opName, ct))
}

func mkShiftT[T integer](opName string, ct Type) mkFunc {
	return byArith(ct, nil, nil, mkShiftTS[T, int32](opName), mkShiftTS[T, uint32](opName), mkShiftTS[T, int64](opName), mkShiftTS[T, uint64](opName))
}

func mkShiftTS[T, S integer](opName string) mkFunc {
	loop := shlVV[T, S]
	if opName == ">>" {
		loop = shrVV[T, S]
	}
	return func(f *frame, o *op) func(int) {
		po, pa, pb := get[T](f, o.dst), get[T](f, o.src[0]), get[S](f, o.src[1])
		n := lim(f, o)
		return func(m int) { loop((*po)[:n(m)], *pa, *pb) }
	}
}

func mkSelect(t Type) mkFunc {
	return byType(t, mkSelectT[bool], mkSelectT[uint8], mkSelectT[int32], mkSelectT[uint32], mkSelectT[int64], mkSelectT[uint64], mkSelectT[float32], mkSelectT[float64])
}

func mkSelectT[T any](f *frame, o *op) func(int) {
	po, pc, pa, pb := get[T](f, o.dst), get[bool](f, o.src[0]), get[T](f, o.src[1]), get[T](f, o.src[2])
	sc, sa, sb := f.scalar(o.src[0]), f.scalar(o.src[1]), f.scalar(o.src[2])
	switch {
	case f.scalar(o.dst):
		return func(int) { selectSS((*po)[:1], *pc, (*pa)[0], (*pb)[0]) }
	case sc:
		// One condition for every element: copy the chosen side.
		return func(m int) {
			src, s := *pb, sb
			if (*pc)[0] {
				src, s = *pa, sa
			}
			if s {
				fill((*po)[:m], src[0])
			} else {
				copy((*po)[:m], src)
			}
		}
	case sa && sb:
		return func(m int) { selectSS((*po)[:m], *pc, (*pa)[0], (*pb)[0]) }
	case sa:
		return func(m int) { selectSV((*po)[:m], *pc, (*pa)[0], *pb) }
	case sb:
		return func(m int) { selectVS((*po)[:m], *pc, *pa, (*pb)[0]) }
	}
	return func(m int) { selectVV((*po)[:m], *pc, *pa, *pb) }
}

// mkConv converts from one type to another as C does.
func mkConv(from, to Type) mkFunc {
	switch from {
	case Bool:
		return byType(to, nil, mkFromBool[uint8], mkFromBool[int32], mkFromBool[uint32], mkFromBool[int64], mkFromBool[uint64], mkFromBool[float32], mkFromBool[float64])
	case Uint8:
		return mkConvFrom[uint8](to)
	case Int32:
		return mkConvFrom[int32](to)
	case Uint32:
		return mkConvFrom[uint32](to)
	case Int64:
		return mkConvFrom[int64](to)
	case Uint64:
		return mkConvFrom[uint64](to)
	case Float32:
		return mkConvFloat[float32](to)
	}
	return mkConvFloat[float64](to)
}

func mkFromBool[D number](f *frame, o *op) func(int) {
	po, pa, n := get[D](f, o.dst), get[bool](f, o.src[0]), lim(f, o)
	return func(m int) { fromBool((*po)[:n(m)], *pa) }
}

func mkToBool[S number](f *frame, o *op) func(int) {
	po, pa, n := get[bool](f, o.dst), get[S](f, o.src[0]), lim(f, o)
	return func(m int) { toBool((*po)[:n(m)], *pa) }
}

func mkConvSD[S, D number](f *frame, o *op) func(int) {
	po, pa, n := get[D](f, o.dst), get[S](f, o.src[0]), lim(f, o)
	return func(m int) { conv((*po)[:n(m)], *pa) }
}

func mkConvFrom[S uint8 | integer](to Type) mkFunc {
	return byType(to, mkToBool[S], mkConvSD[S, uint8], mkConvSD[S, int32], mkConvSD[S, uint32], mkConvSD[S, int64], mkConvSD[S, uint64], mkConvSD[S, float32], mkConvSD[S, float64])
}

func mkConvFloat[S float](to Type) mkFunc {
	return byType(to, mkToBool[S],
		mkSat[S, uint8](0, 1<<8, 0, math.MaxUint8),
		mkSat[S, int32](math.MinInt32, 1<<31, math.MinInt32, math.MaxInt32),
		mkSat[S, uint32](0, 1<<32, 0, math.MaxUint32),
		mkSat[S, int64](math.MinInt64, 1<<63, math.MinInt64, math.MaxInt64),
		mkSat[S, uint64](0, 1<<64, 0, math.MaxUint64),
		mkConvSD[S, float32], mkConvSD[S, float64])
}

func mkSat[S float, D uint8 | integer](lo, hiEx float64, minD, maxD D) mkFunc {
	return func(f *frame, o *op) func(int) {
		po, pa, n := get[D](f, o.dst), get[S](f, o.src[0]), lim(f, o)
		return func(m int) { convSat((*po)[:n(m)], *pa, lo, hiEx, minD, maxD) }
	}
}

// mkCall calls a math function whose arguments are of type t.
func mkCall(fn *mathFunc, t Type) mkFunc {
	switch fn.kind {
	case fkClass:
		if t == Float32 {
			return mkClass[float32](fn.f1)
		}
		return mkClass[float64](fn.f1)
	case fkAbs:
		switch t {
		case Int32:
			return mkUn(iabsV[int32])
		case Int64:
			return mkUn(iabsV[int64])
		}
	case fkMinMax:
		if !t.isFloat() {
			if fn.name == "min" {
				return byArith(t, nil, nil, mkBin(vvOnly(iminVV[int32])), mkBin(vvOnly(iminVV[uint32])), mkBin(vvOnly(iminVV[int64])), mkBin(vvOnly(iminVV[uint64])))
			}
			return byArith(t, nil, nil, mkBin(vvOnly(imaxVV[int32])), mkBin(vvOnly(imaxVV[uint32])), mkBin(vvOnly(imaxVV[int64])), mkBin(vvOnly(imaxVV[uint64])))
		}
	}
	if t == Float32 {
		return mkFloatCall[float32](fn)
	}
	return mkFloatCall[float64](fn)
}

func mkUn[T any](loop func(o, a []T)) mkFunc {
	return func(f *frame, o *op) func(int) {
		po, pa, n := get[T](f, o.dst), get[T](f, o.src[0]), lim(f, o)
		return func(m int) { loop((*po)[:n(m)], *pa) }
	}
}

func mkClass[T float](fn func(float64) float64) mkFunc {
	return func(f *frame, o *op) func(int) {
		po, pa, n := get[bool](f, o.dst), get[T](f, o.src[0]), lim(f, o)
		return func(m int) { class1((*po)[:n(m)], *pa, fn) }
	}
}

func mkFloatCall[T float](fn *mathFunc) mkFunc {
	switch fn.nargs {
	case 1:
		switch fn.base {
		case "sqrt":
			return mkUn(sqrtV[T])
		case "fabs":
			return mkUn(fabsV[T])
		}
		f1 := fn.f1
		return mkUn(func(o, a []T) { call1(o, a, f1) })
	case 2:
		f2 := fn.f2
		return mkBin(vvOnly(func(o, a, b []T) { call2(o, a, b, f2) }))
	}
	f3 := fn.f3
	return func(f *frame, o *op) func(int) {
		po, pa, pb, pc, n := get[T](f, o.dst), get[T](f, o.src[0]), get[T](f, o.src[1]), get[T](f, o.src[2]), lim(f, o)
		return func(m int) { call3((*po)[:n(m)], *pa, *pb, *pc, f3) }
	}
}

// mkMadd is a*b + c of type t, a a vector (see maddVVV).
func mkMadd(t Type) mkFunc {
	return byArith(t, mkMaddT[float32], mkMaddT[float64], mkMaddT[int32], mkMaddT[uint32], mkMaddT[int64], mkMaddT[uint64])
}

func mkMaddT[T arith](f *frame, o *op) func(int) {
	po, pa, pb, pc := get[T](f, o.dst), get[T](f, o.src[0]), get[T](f, o.src[1]), get[T](f, o.src[2])
	sb, sc := f.scalar(o.src[1]), f.scalar(o.src[2])
	switch {
	case sb && sc:
		return func(m int) { maddVSS((*po)[:m], *pa, (*pb)[0], (*pc)[0]) }
	case sb:
		return func(m int) { maddVSV((*po)[:m], *pa, (*pb)[0], *pc) }
	case sc:
		return func(m int) { maddVVS((*po)[:m], *pa, *pb, (*pc)[0]) }
	}
	return func(m int) { maddVVV((*po)[:m], *pa, *pb, *pc) }
}
