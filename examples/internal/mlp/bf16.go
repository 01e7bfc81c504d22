package mlp

import (
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
)

// bf16 is a bfloat16 array: the matrix products' operands in StepBF16.
type bf16 = cuarray.Array[half.BFloat16]

// StepBF16 is Step in mixed precision, as torch.autocast(dtype=bfloat16)
// runs a Linear layer: every matrix product takes bfloat16 operands on the
// tensor cores and accumulates in float32. The weights stay float32 (the
// master copy SGD updates) and are rounded to bfloat16 each step; each
// layer's input is rounded to bfloat16 once and kept so for the backward
// pass, which therefore saves half the bytes of Step's. The products write
// float32 (cuarray.GemmEx), so the bias, ReLU, the loss and the gradients'
// sums stay float32, as autocast keeps the loss.
func (m *MLP) StepBF16(x *cuarray.Array[float32], labels *cuarray.Array[int32]) (*cuarray.Array[float32], error) {
	f := m.f
	s := f.Stream()
	m.newBytes = 0
	batch := x.Shape()[0]
	round := func(a *cuarray.Array[float32]) (*bf16, error) {
		b, err := cuarray.Convert[half.BFloat16](s, nil, a)
		if err == nil {
			m.newBytes += int64(2 * b.Len())
		}
		return b, err
	}

	// Forward: z = h·W + b in float32 from bfloat16 h and W.
	inputs := make([]*bf16, 0, len(m.Layers)) // each layer's input, rounded
	weights := make([]*bf16, 0, len(m.Layers))
	var pre []*cuarray.Array[float32]
	h := x
	for _, l := range m.Layers {
		hb, err := round(h)
		if err != nil {
			return nil, err
		}
		wb, err := round(l.W)
		if err != nil {
			return nil, err
		}
		inputs, weights = append(inputs, hb), append(weights, wb)
		z, err := m.new(batch, l.W.Shape()[1])
		if err != nil {
			return nil, err
		}
		if _, err := cuarray.GemmEx(s, z, false, false, 1, hb, wb, 0); err != nil { // z = h·W
			return nil, err
		}
		if _, err := f.AddRowVector(z, z, l.B); err != nil {
			return nil, err
		}
		pre = append(pre, z)
		h = z
		if l.Relu {
			if h, err = m.new(z.Shape()...); err != nil {
				return nil, err
			}
			if _, err := f.Relu(h, z); err != nil {
				return nil, err
			}
		}
	}

	loss, dz, err := m.lossGrad(h, labels)
	if err != nil {
		return nil, err
	}

	// Backward: the products' operands in bfloat16, their results and the
	// rest in float32.
	for i := len(m.Layers) - 1; i >= 0; i-- {
		l := m.Layers[i]
		dzb, err := round(dz)
		if err != nil {
			return nil, err
		}
		dW, err := m.new(l.W.Shape()...)
		if err != nil {
			return nil, err
		}
		if _, err := cuarray.GemmEx(s, dW, true, false, 1, inputs[i], dzb, 0); err != nil { // dW = inᵀ·dz
			return nil, err
		}
		db, err := m.new(l.B.Len())
		if err != nil {
			return nil, err
		}
		if _, err := f.SumCols(db, dz); err != nil {
			return nil, err
		}
		if i > 0 {
			dh, err := m.new(batch, l.W.Shape()[0])
			if err != nil {
				return nil, err
			}
			if _, err := cuarray.GemmEx(s, dh, false, true, 1, dzb, weights[i], 0); err != nil { // dh = dz·Wᵀ
				return nil, err
			}
			if dz, err = m.new(dh.Shape()...); err != nil {
				return nil, err
			}
			if _, err := f.ReluGrad(dz, pre[i-1], dh); err != nil {
				return nil, err
			}
			pre[i-1] = nil
		}
		// Served: dropped so that the collector may take them while the
		// step goes on (Step says why).
		inputs[i], weights[i] = nil, nil
		if err := m.sgd(l.W, l.vW, dW); err != nil {
			return nil, err
		}
		if err := m.sgd(l.B, l.vB, db); err != nil {
			return nil, err
		}
	}
	return loss, nil
}
