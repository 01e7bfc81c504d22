package elemexpr

import (
	"math"
	"testing"
)

// The benchmarks time Eval beside a hand-written Go loop computing the
// same thing (the anchor), in the same benchmark, so that the ratio
// (expr/loop) is read from one run: go test -bench . -run XXX.

const benchN = 1 << 16

func benchExpr(b *testing.B, in, out []Param, body string, args []any, loop func()) {
	e, err := Compile(in, out, body)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("loop", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			loop()
		}
	})
	b.Run("expr", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			if err := e.Eval(benchN, args...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchData() (x, y, z []float32) {
	x, y, z = make([]float32, benchN), make([]float32, benchN), make([]float32, benchN)
	for k := range x {
		x[k] = float32(k%1000)/500 - 1
		y[k] = float32(k % 7)
	}
	return
}

func BenchmarkAxpy(b *testing.B) {
	x, y, z := benchData()
	a := float32(2)
	benchExpr(b, []Param{{"a", Float32}, {"x", Float32}, {"y", Float32}}, []Param{{"z", Float32}}, "z = a * x + y",
		[]any{a, x, y, z}, func() {
			for k := range z {
				z[k] = a*x[k] + y[k]
			}
		})
}

func BenchmarkTanhHalf(b *testing.B) {
	x, _, z := benchData()
	benchExpr(b, []Param{{"x", Float32}}, []Param{{"z", Float32}}, "z = tanh(x) * 0.5f",
		[]any{x, z}, func() {
			for k := range z {
				z[k] = float32(math.Tanh(float64(x[k]))) * 0.5
			}
		})
}

func BenchmarkSigmoid(b *testing.B) {
	x, _, z := benchData()
	benchExpr(b, []Param{{"x", Float32}}, []Param{{"z", Float32}}, "z = 1.0f / (1.0f + expf(-x))",
		[]any{x, z}, func() {
			for k := range z {
				z[k] = 1 / (1 + float32(math.Exp(float64(-x[k]))))
			}
		})
}

func BenchmarkRelu(b *testing.B) {
	x, _, z := benchData()
	benchExpr(b, []Param{{"x", Float32}}, []Param{{"z", Float32}}, "z = x > 0 ? x : 0",
		[]any{x, z}, func() {
			for k := range z {
				if x[k] > 0 {
					z[k] = x[k]
				} else {
					z[k] = 0
				}
			}
		})
}

func BenchmarkInPlaceScaleInt32(b *testing.B) {
	v := make([]int32, benchN)
	for k := range v {
		v[k] = int32(k)
	}
	benchExpr(b, []Param{{"x", Int32}}, []Param{{"z", Int32}}, "z = x * 3 / 2 + 1",
		[]any{v, v}, func() {
			for k := range v {
				v[k] = v[k]*3/2 + 1
			}
		})
}
