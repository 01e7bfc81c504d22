package mlp

import (
	"math"
	"math/rand/v2"

	"github.com/gocuda/gocuda/cuarray"
)

// Batch is one batch of the synthetic data set: inputs and their classes.
type Batch struct {
	X      *cuarray.Array[float32] // batch × in
	Labels *cuarray.Array[int32]   // batch
}

// teacherHidden is the width of the teacher network. Small: the labels
// need some structure a student can learn, not a big model.
const teacherHidden = 64

// MakeData makes n batches of inputs with normal entries, labelled by a
// random teacher network, class = argmax(relu(x·A)·B), so that a student
// can learn them and the loss visibly falls. The teacher runs on the
// device; its logits are small (batch × classes) and are read back to take
// the argmax.
func MakeData(f cuarray.Ops[float32], r *rand.Rand, n, batch, in, classes int) ([]Batch, error) {
	normal := func(count int, scale float64) []float32 {
		v := make([]float32, count)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		return v
	}
	a, err := f.FromSlice(normal(in*teacherHidden, 1/math.Sqrt(float64(in))), in, teacherHidden)
	if err != nil {
		return nil, err
	}
	b, err := f.FromSlice(normal(teacherHidden*classes, 1/math.Sqrt(teacherHidden)), teacherHidden, classes)
	if err != nil {
		return nil, err
	}
	fl := cuarray.On[int32](f.Stream())
	data := make([]Batch, n)
	for i := range data {
		x, err := f.FromSlice(normal(batch*in, 1), batch, in)
		if err != nil {
			return nil, err
		}
		h, err := f.New(batch, teacherHidden)
		if err != nil {
			return nil, err
		}
		if _, err := f.MatMul(h, x, a); err != nil {
			return nil, err
		}
		if _, err := f.Relu(h, h); err != nil {
			return nil, err
		}
		logits, err := f.New(batch, classes)
		if err != nil {
			return nil, err
		}
		if _, err := f.MatMul(logits, h, b); err != nil {
			return nil, err
		}
		host, err := logits.ToSlice()
		if err != nil {
			return nil, err
		}
		labels := make([]int32, batch)
		for row := range labels {
			best := 0
			for c := 1; c < classes; c++ {
				if host[row*classes+c] > host[row*classes+best] {
					best = c
				}
			}
			labels[row] = int32(best)
		}
		l, err := fl.FromSlice(labels)
		if err != nil {
			return nil, err
		}
		data[i] = Batch{X: x, Labels: l}
	}
	return data, nil
}
