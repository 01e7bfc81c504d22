package mlp

import (
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
)

// bf16 is a bfloat16 array: the activations and products' operands in
// StepBF16.
type bf16 = cuarray.Array[half.BFloat16]

// StepBF16 is Step in mixed precision, as torch.autocast(dtype=bfloat16)
// runs a Linear layer: every matrix product takes bfloat16 operands on the
// tensor cores and accumulates in float32, and the activations stay
// bfloat16 between the products, so each layer moves half the bytes of
// Step's. The weights and biases stay float32 (the master copies SGD
// updates) and are rounded to bfloat16 each step; the weights' and biases'
// gradients come out of their products in float32, and the loss is
// computed in float32 from the logits, as autocast keeps the loss.
//
// A layer's forward pass is z = h·W (bfloat16 result), z += b (the bias
// broadcast over the rows, computed in float32 and rounded once), and ReLU
// in place; its backward pass takes the gradient through ReLU from the
// layer's bfloat16 output (h > 0 exactly where h·W + b > 0), the bias's
// gradient as the product onesᵀ·dz (one read of dz on the tensor cores),
// and dh = dz·Wᵀ in bfloat16.
func (m *MLP) StepBF16(x *cuarray.Array[float32], labels *cuarray.Array[int32]) (*cuarray.Array[float32], error) {
	f := m.f
	s := f.Stream()
	b16 := cuarray.On[half.BFloat16](s)
	m.newBytes = 0
	batch := x.Shape()[0]
	round := func(a *cuarray.Array[float32]) (*bf16, error) {
		b, err := cuarray.Convert[half.BFloat16](s, nil, a)
		if err == nil {
			m.newBytes += int64(2 * b.Len())
		}
		return b, err
	}
	newBF16 := func(shape ...int) (*bf16, error) {
		b, err := b16.New(shape...)
		if err == nil {
			m.newBytes += int64(2 * b.Len())
		}
		return b, err
	}
	ones, err := m.onesBF16(batch)
	if err != nil {
		return nil, err
	}

	// Forward, bfloat16 throughout.
	inputs := make([]*bf16, 0, len(m.Layers)) // each layer's input
	weights := make([]*bf16, 0, len(m.Layers))
	h, err := round(x)
	if err != nil {
		return nil, err
	}
	for _, l := range m.Layers {
		wb, err := round(l.W)
		if err != nil {
			return nil, err
		}
		bb, err := round(l.B)
		if err != nil {
			return nil, err
		}
		inputs, weights = append(inputs, h), append(weights, wb)
		z, err := newBF16(batch, l.W.Shape()[1])
		if err != nil {
			return nil, err
		}
		if _, err := cuarray.GemmEx(s, z, false, false, 1, h, wb, 0); err != nil { // z = h·W
			return nil, err
		}
		if _, err := b16.AddRowVector(z, z, bb); err != nil {
			return nil, err
		}
		if l.Relu {
			if _, err := b16.Relu(z, z); err != nil {
				return nil, err
			}
		}
		h = z
	}
	logits, err := cuarray.Convert[float32](s, nil, h)
	if err != nil {
		return nil, err
	}
	m.newBytes += int64(4 * logits.Len())
	loss, dz32, err := m.lossGrad(logits, labels)
	if err != nil {
		return nil, err
	}
	dz, err := round(dz32)
	if err != nil {
		return nil, err
	}

	// Backward: dz bfloat16, the weights' and biases' gradients float32.
	for i := len(m.Layers) - 1; i >= 0; i-- {
		l := m.Layers[i]
		dW, err := m.new(l.W.Shape()...)
		if err != nil {
			return nil, err
		}
		if _, err := cuarray.GemmEx(s, dW, true, false, 1, inputs[i], dz, 0); err != nil { // dW = inᵀ·dz
			return nil, err
		}
		db, err := m.new(1, l.B.Len())
		if err != nil {
			return nil, err
		}
		if _, err := cuarray.GemmEx(s, db, false, false, 1, ones, dz, 0); err != nil { // db = onesᵀ·dz
			return nil, err
		}
		if i > 0 {
			dh, err := newBF16(batch, l.W.Shape()[0])
			if err != nil {
				return nil, err
			}
			if _, err := cuarray.GemmEx(s, dh, false, true, 1, dz, weights[i], 0); err != nil { // dh = dz·Wᵀ
				return nil, err
			}
			// Through ReLU, from the previous layer's output (this
			// layer's input), in place.
			if dz, err = b16.ReluGrad(dh, inputs[i], dh); err != nil {
				return nil, err
			}
		}
		// Served: dropped so that the collector may take them while the
		// step goes on (Step says why).
		inputs[i], weights[i] = nil, nil
		if err := m.sgd(l.W, l.vW, dW); err != nil {
			return nil, err
		}
		db1, err := db.Reshape(l.B.Len())
		if err != nil {
			return nil, err
		}
		if err := m.sgd(l.B, l.vB, db1); err != nil {
			return nil, err
		}
	}
	return loss, nil
}

// onesBF16 is a 1 × n row of bfloat16 ones, kept for the next step: the
// left operand of the biases' gradient product.
func (m *MLP) onesBF16(n int) (*bf16, error) {
	if m.ones != nil && m.ones.Len() == n {
		return m.ones, nil
	}
	o, err := cuarray.On[half.BFloat16](m.f.Stream()).Full(half.BFloat16FromFloat32(1), 1, n)
	if err != nil {
		return nil, err
	}
	m.ones = o
	return o, nil
}
