package optable

import (
	"bytes"
	"fmt"
)

// The half types' column (Type.Half): float16 and bfloat16 compute in
// float32. Their C functors take and return the storage bits (unsigned
// short), so that optable.cuh's drivers stay storage-generic; the
// operator widens the operands (<suffix>_to_f32, exact), evaluates
// float32's body and rounds the result once (f32_to_<suffix>, nearest
// even), with the helpers of kernels/cuda/half.cuh. The host loops do the
// same with package half's conversions. Where selects bits and needs
// neither; a comparison's bool result is not rounded.

// halfToF32 and halfFromF32 are a half type's widening and rounding, in C
// and in Go.
func halfToF32(t Type, x string) (c, g string) {
	return t.Suffix + "_to_f32(" + x + ")", x + ".Float32()"
}

func halfFromF32(t Type, c, g string) (string, string) {
	return "f32_to_" + t.Suffix + "(" + c + ")", t.Go + "FromFloat32(" + g + ")"
}

// convertHalf is Convert where from or to is a half type (and they
// differ): from a half type, widen to float32 and convert that; to one,
// round once from float32 (float32, bool, the other half type through
// float32, exactly widened) or from float64 (float64, and the integers as
// Go's float64(x) gives them: exact for int32 and uint8, int64 past 2^53
// first rounds to float64).
func convertHalf(from, to Type, cx, gx string) (c, g string) {
	f32, _ := TypeOf("f32")
	if from.Half {
		cx, gx = halfToF32(from, cx)
		if !to.Half {
			return convertReal(f32, to, cx, gx)
		}
		from = f32
	}
	switch {
	case from.Suffix == "f32":
	case from.Bool:
		cx, gx = "(float)"+cx, "float32(b2u8("+gx+"))"
	default: // float64 and the integers
		return "f64_to_" + to.Suffix + "((double)" + cx + ")", to.Go + "FromFloat64(float64(" + gx + "))"
	}
	return halfFromF32(to, cx, gx)
}

// halfFunctor writes the C functor and kernel of case c on a half type.
func halfFunctor(b *bytes.Buffer, c Case) {
	t, o, f := c.Type, c.Out(), functor(c)
	x, _ := halfToF32(t, "x_")
	y, _ := halfToF32(t, "y_")
	ret := func(body string) string {
		if o.Half {
			r, _ := halfFromF32(t, body, "")
			return r
		}
		return body
	}
	switch c.Op.Kind {
	case Unary:
		fmt.Fprintf(b, "struct %s {\n  typedef float T;\n  __device__ __forceinline__ %s operator()(unsigned short x_) const {\n    const T x = %s;\n    return %s;\n  }\n};\n", f, o.C, x, ret(c.Impl.C))
		fmt.Fprintf(b, "KERNEL %s(%s* dst, const %s* x, i64 n) { emap1(dst, x, n, %s()); }\n", c.KernelName(), o.C, t.C, f)
	case Binary, Compare:
		fmt.Fprintf(b, "struct %s {\n  typedef float T;\n  __device__ __forceinline__ %s operator()(unsigned short x_, unsigned short y_) const {\n    const T x = %s, y = %s;\n    return %s;\n  }\n};\n", f, o.C, x, y, ret(c.Impl.C))
		fmt.Fprintf(b, "KERNEL %s(%s* dst, const %s* a, const %s* b, i64 n%s) { emap2(dst, a, b, n, sc, %s()); }\n", c.KernelName(), o.C, t.C, t.C, scalarsParam, f)
	case Clamp:
		lo, _ := halfToF32(t, "lo_")
		hi, _ := halfToF32(t, "hi_")
		fmt.Fprintf(b, "struct %s {\n  typedef float T;\n  unsigned short lo_, hi_;\n  __device__ __forceinline__ unsigned short operator()(unsigned short x_) const {\n    const T x = %s, lo = %s, hi = %s;\n    return %s;\n  }\n};\n", f, x, lo, hi, ret(c.Impl.C))
		// The bounds' bits are the low 16 of the scalars (scalar<T> has no
		// unsigned short overload: it is looked up where it is defined).
		fmt.Fprintf(b, "KERNEL %s(%s* dst, const %s* x, u64 lo, u64 hi, i64 n) {\n  emap1(dst, x, n, %s{(unsigned short)lo, (unsigned short)hi});\n}\n", c.KernelName(), t.C, t.C, f)
	}
}

// halfHostLoop writes the host loop of case c on a half type.
func halfHostLoop(b *bytes.Buffer, c Case) {
	t, o := c.Type, c.Out()
	ret := c.Impl.Go
	if o.Half {
		_, ret = halfFromF32(t, "", c.Impl.Go)
	}
	switch c.Op.Kind {
	case Unary:
		fmt.Fprintf(b, "\nfunc %s(d []%s, xs []%s) {\n\txs = xs[:len(d)]\n\tfor i, xh := range xs {\n\t\tx := xh.Float32()\n\t\td[i] = %s\n\t}\n}\n", hostName(c), o.Go, t.Go, ret)
	case Binary, Compare:
		fmt.Fprintf(b, "\nfunc %s(d []%s, xs, ys []%s) {\n\txs, ys = xs[:len(d)], ys[:len(d)]\n\tfor i, xh := range xs {\n\t\tx, y := xh.Float32(), ys[i].Float32()\n\t\td[i] = %s\n\t}\n}\n", hostName(c), o.Go, t.Go, ret)
	case Clamp:
		fmt.Fprintf(b, "\nfunc %s(d, xs []%s, loH, hiH %s) {\n\txs = xs[:len(d)]\n\tlo, hi := loH.Float32(), hiH.Float32()\n\tfor i, xh := range xs {\n\t\tx := xh.Float32()\n\t\td[i] = %s\n\t}\n}\n", hostName(c), t.Go, t.Go, ret)
	}
}

// halfTyped reports whether case c takes the half emission (Where
// selects bits and takes the ordinary one).
func halfTyped(c Case) bool { return c.Type.Half && c.Op.Kind != Where }
