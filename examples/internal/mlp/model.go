package mlp

import (
	"math"
	"math/rand/v2"

	"github.com/gocuda/gocuda/cuarray"
)

// The model is a multilayer perceptron in the style of Flux's Chain of
// Dense layers: each hidden layer is relu(x·W + b), the last layer gives
// one logit per class, and the loss is the softmax cross-entropy of the
// logits against the labels, averaged over the batch.
//
// Every step makes its arrays fresh with New, as a user writes it: the
// activations of the forward pass, their gradients, the weight gradients.
// Nothing is freed by hand. The arrays become garbage when the step
// returns, and Go's collector (run early by gocuda's pressure layer when
// device memory gets tight) gives their memory back to the pool.

// Dense is one layer: out = act(in·W + b), W is in × out, b has out
// elements. vW and vb are the SGD momentum buffers.
type Dense struct {
	W, B   *cuarray.Array[float32]
	vW, vB *cuarray.Array[float32]
	Relu   bool
}

// NewDense makes a layer initialised as PyTorch's nn.Linear is (and
// bench/pytorch_train.py relies on that): W and b uniform in ±1/√in.
func NewDense(f cuarray.Ops[float32], r *rand.Rand, in, out int, relu bool) (*Dense, error) {
	bound := 1 / math.Sqrt(float64(in))
	uniform := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((2*r.Float64() - 1) * bound)
		}
		return v
	}
	w, err := f.FromSlice(uniform(in*out), in, out)
	if err != nil {
		return nil, err
	}
	b, err := f.FromSlice(uniform(out), out)
	if err != nil {
		return nil, err
	}
	vw, err := f.Zeros(in, out)
	if err != nil {
		return nil, err
	}
	vb, err := f.Zeros(out)
	if err != nil {
		return nil, err
	}
	return &Dense{W: w, B: b, vW: vw, vB: vb, Relu: relu}, nil
}

// MLP is the chain of layers, and the optimizer's settings: SGD with
// momentum, v = μ·v + g, w = w - lr·v (PyTorch's torch.optim.SGD).
type MLP struct {
	Layers   []*Dense
	LR, Mom  float32
	f        cuarray.Ops[float32]
	newBytes int64 // bytes of the arrays the last Step made
	ones     *bf16 // StepBF16's row of ones (onesBF16)
}

// NewMLP makes in → width (depth times, with relu) → classes.
func NewMLP(f cuarray.Ops[float32], r *rand.Rand, in, width, depth, classes int, lr, mom float32) (*MLP, error) {
	m := &MLP{LR: lr, Mom: mom, f: f}
	for i := range depth + 1 {
		fanIn, fanOut, relu := width, width, true
		if i == 0 {
			fanIn = in
		}
		if i == depth {
			fanOut, relu = classes, false
		}
		l, err := NewDense(f, r, fanIn, fanOut, relu)
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, l)
	}
	return m, nil
}

// new makes a fresh array for this step, and counts its bytes so that the
// program can say how much garbage a step leaves.
func (m *MLP) new(shape ...int) (*cuarray.Array[float32], error) {
	a, err := m.f.New(shape...)
	if err == nil {
		m.newBytes += int64(4 * a.Len())
	}
	return a, err
}

// StepBytes is the bytes of the fresh arrays the last Step made: the
// garbage a step leaves.
func (m *MLP) StepBytes() int64 { return m.newBytes }

// Step runs the forward pass, the backward pass and the SGD update on one
// batch x (batch × in) with labels (batch int32 classes). It returns the
// loss of each example, as an array still on the device: reading it would
// make the host wait for the GPU every step.
func (m *MLP) Step(x *cuarray.Array[float32], labels *cuarray.Array[int32]) (*cuarray.Array[float32], error) {
	return m.StepReduce(x, labels, nil)
}

// Reduce all-reduces one layer's gradients in place: dW, the weight's,
// and db, the bias's. It may queue its work on another stream than the
// model's: the arrays order their uses across streams themselves.
type Reduce func(dW, db *cuarray.Array[float32]) error

// StepReduce is Step with each layer's gradients handed to reduce before
// the update uses them: data-parallel training all-reduces them there, in
// place, so that every rank updates its copy of the model alike. reduce
// is called once a layer, last layer first, as soon as the backward pass
// has queued that layer's dW and db and before it queues the gradient for
// the layer below, so that communication queued on a stream of its own
// overlaps the rest of the backward pass (as PyTorch's
// DistributedDataParallel does).
//
// With a reduce, the SGD updates are queued after the whole backward
// pass, last layer first: an update on m's stream waits for its layer's
// reduce (through the arrays' cross-stream ordering, not the host), and
// none of the backward pass waits for communication. That changes no
// number: a layer's weights serve the backward pass only in that layer's
// own step (dh = dz·Wᵀ), which comes before its update either way. The
// cost is memory: every layer's dW lives until the updates are queued.
//
// A nil reduce is Step: each layer's update right after its backward.
func (m *MLP) StepReduce(x *cuarray.Array[float32], labels *cuarray.Array[int32], reduce Reduce) (*cuarray.Array[float32], error) {
	f := m.f
	m.newBytes = 0
	batch := x.Shape()[0]

	// Forward. Each layer's input and pre-activation are kept for the
	// backward pass.
	inputs := []*cuarray.Array[float32]{x}
	var pre []*cuarray.Array[float32]
	h := x
	for _, l := range m.Layers {
		out := l.W.Shape()[1]
		z, err := m.new(batch, out)
		if err != nil {
			return nil, err
		}
		if _, err := f.MatMul(z, h, l.W); err != nil { // z = h·W
			return nil, err
		}
		if _, err := f.AddRowVector(z, z, l.B); err != nil { // z += b, in place
			return nil, err
		}
		pre = append(pre, z)
		h = z
		if l.Relu {
			if h, err = m.new(batch, out); err != nil {
				return nil, err
			}
			if _, err := f.Relu(h, z); err != nil {
				return nil, err
			}
		}
		inputs = append(inputs, h)
	}

	loss, dz, err := m.lossGrad(h, labels)
	if err != nil {
		return nil, err
	}

	// Backward, last layer first. dz is the gradient at layer i's
	// pre-activation. deferred holds, with a reduce, the layers whose
	// update waits for the end of the backward pass.
	type update struct {
		l      *Dense
		dW, db *cuarray.Array[float32]
	}
	var deferred []update
	if reduce != nil {
		deferred = make([]update, 0, len(m.Layers))
	}
	for i := len(m.Layers) - 1; i >= 0; i-- {
		l := m.Layers[i]
		in := inputs[i]
		dW, err := m.new(l.W.Shape()...)
		if err != nil {
			return nil, err
		}
		if _, err := f.Gemm(dW, true, false, 1, in, dz, 0); err != nil { // dW = inᵀ·dz
			return nil, err
		}
		db, err := m.new(l.B.Len())
		if err != nil {
			return nil, err
		}
		if _, err := f.SumCols(db, dz); err != nil { // db = Σ over the batch
			return nil, err
		}
		if reduce != nil {
			// Before dh: the reduce waits (on its stream) only for the
			// work queued so far, so it starts while dh computes.
			if err := reduce(dW, db); err != nil {
				return nil, err
			}
			deferred = append(deferred, update{l, dW, db})
		}
		if i > 0 {
			// The gradient for the layer below, through W before the
			// update changes it (the stream runs these in order).
			dh, err := m.new(in.Shape()...)
			if err != nil {
				return nil, err
			}
			if _, err := f.Gemm(dh, false, true, 1, dz, l.W, 0); err != nil { // dh = dz·Wᵀ
				return nil, err
			}
			if dz, err = m.new(in.Shape()...); err != nil {
				return nil, err
			}
			if _, err := f.ReluGrad(dz, pre[i-1], dh); err != nil {
				return nil, err
			}
		}
		// Layer i's saved input and the pre-activation below it have
		// served: dropped, so that the collector may take them while the
		// step goes on, as autograd frees what it saved for a layer once
		// that layer's backward has run. (Kept, they stay reachable until
		// Step returns, and a collection during the backward pass finds
		// them live.)
		inputs[i] = nil
		if i > 0 {
			pre[i-1] = nil
		}
		if reduce == nil {
			if err := m.sgd(l.W, l.vW, dW); err != nil {
				return nil, err
			}
			if err := m.sgd(l.B, l.vB, db); err != nil {
				return nil, err
			}
		}
	}
	// The momentum decay needs no gradient: queued first, it runs while
	// the last all-reduce is still going, and only the rest waits for it.
	for _, u := range deferred {
		if _, err := m.f.Scale(u.l.vW, m.Mom, u.l.vW); err != nil {
			return nil, err
		}
		if _, err := m.f.Scale(u.l.vB, m.Mom, u.l.vB); err != nil {
			return nil, err
		}
	}
	for _, u := range deferred {
		if err := m.step(u.l.W, u.l.vW, u.dW); err != nil {
			return nil, err
		}
		if err := m.step(u.l.B, u.l.vB, u.db); err != nil {
			return nil, err
		}
	}
	return loss, nil
}

// lossGrad is each example's loss for logits, and its gradient with
// respect to the logits: (softmax - onehot) / batch, the gradient of the
// mean loss.
func (m *MLP) lossGrad(logits *cuarray.Array[float32], labels *cuarray.Array[int32]) (loss, dz *cuarray.Array[float32], err error) {
	batch := logits.Shape()[0]
	if loss, err = m.new(batch); err != nil {
		return nil, nil, err
	}
	if dz, err = m.new(logits.Shape()...); err != nil {
		return nil, nil, err
	}
	if err := m.f.SoftmaxCrossEntropy(loss, dz, logits, labels, 1/float32(batch)); err != nil {
		return nil, nil, err
	}
	return loss, dz, nil
}

// sgd updates w with gradient g and momentum buffer v: v = μ·v + g,
// w = w - lr·v.
func (m *MLP) sgd(w, v, g *cuarray.Array[float32]) error {
	if _, err := m.f.Scale(v, m.Mom, v); err != nil {
		return err
	}
	return m.step(w, v, g)
}

// step is sgd after the decay v = μ·v: v += g, w = w - lr·v.
func (m *MLP) step(w, v, g *cuarray.Array[float32]) error {
	if _, err := m.f.Axpy(v, 1, g, v); err != nil {
		return err
	}
	_, err := m.f.Axpy(w, -m.LR, v, w)
	return err
}
