package graphbench

import (
	"fmt"
	"time"

	"github.com/gocuda/gocuda/cuarray"
)

// The anchor's chain: ChainSteps steps on ChainLen floats, ChainOps
// operations (a third of the steps are three operations).
const (
	ChainSteps = 200
	ChainLen   = 4096
	ChainOps   = 334
)

// Ops is the number of operations in steps steps of the chain.
func Ops(steps int) int { return steps + 2*((steps+2)/3) }

// Chain queues steps steps of the chain on f's stream: step i is
// tanh(z*y + x) when i%3 == 0, z + y when i%3 == 1, z * 0.5 otherwise,
// starting from z = x, each making its result (a nil dst, as PyTorch's
// operators do), the intermediates freed as they go. It returns the last
// z, which the caller owns.
func Chain(f cuarray.Ops[float32], x, y *cuarray.Array[float32], steps int) (*cuarray.Array[float32], error) {
	z, owned := x, false
	for i := range steps {
		var next *cuarray.Array[float32]
		var err error
		switch i % 3 {
		case 0:
			var m, a *cuarray.Array[float32]
			if m, err = f.Mul(nil, z, y); err != nil {
				return nil, err
			}
			a, err = f.Add(nil, m, x)
			m.UnsafeFree()
			if err != nil {
				return nil, err
			}
			next, err = f.Tanh(nil, a)
			a.UnsafeFree()
		case 1:
			next, err = f.Add(nil, z, y)
		default:
			next, err = f.MulScalar(nil, z, 0.5)
		}
		if err != nil {
			if owned {
				z.UnsafeFree()
			}
			return nil, err
		}
		if owned {
			z.UnsafeFree()
		}
		z, owned = next, true
	}
	if !owned {
		return f.Clone(x)
	}
	return z, nil
}

// Result is one run's figures: time per step, eager and replayed.
type Result struct {
	Steps, Ops   int
	Eager, Graph time.Duration
	Nodes, Iters int
}

// String is graphs.py's line for the case, with the operations' count.
func (r Result) String() string {
	e, g := us(r.Eager), us(r.Graph)
	return fmt.Sprintf("chain %d ops x %d floats: eager %9.1f us/step  graph %9.1f us/step  eager/graph %5.2f  (%.2f vs %.2f us/op; %d operations a step)",
		r.Steps, ChainLen, e, g, e/g, e/float64(r.Steps), g/float64(r.Steps), r.Ops)
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// Run times steps steps of the chain on s, as graphs.py's timeit does:
// ten warm-up steps, then iters steps and one synchronisation, per step;
// first eager (each step's result freed), then captured once and replayed.
func Run(s *cuarray.Stream, steps, iters int) (Result, error) {
	if steps < 1 || iters < 1 {
		return Result{}, fmt.Errorf("graphbench: %d steps, %d iterations: both must be positive", steps, iters)
	}
	f := cuarray.On[float32](s)
	x, err := f.Randn(ChainLen)
	if err != nil {
		return Result{}, err
	}
	defer x.UnsafeFree()
	y, err := f.Randn(ChainLen)
	if err != nil {
		return Result{}, err
	}
	defer y.UnsafeFree()
	eager := func() error {
		z, err := Chain(f, x, y, steps)
		if err == nil {
			z.UnsafeFree()
		}
		return err
	}
	r := Result{Steps: steps, Ops: Ops(steps), Iters: iters}
	if r.Eager, err = timeit(s, eager, iters); err != nil {
		return r, err
	}
	var out *cuarray.Array[float32]
	g, err := cuarray.Capture(s, func() (err error) {
		out, err = Chain(f, x, y, steps)
		return err
	})
	if err != nil {
		return r, err
	}
	defer func() {
		_ = g.Close()
		out.UnsafeFree()
	}()
	r.Nodes = g.Stats().Nodes
	r.Graph, err = timeit(s, g.Launch, iters)
	return r, err
}

func timeit(s *cuarray.Stream, step func() error, iters int) (time.Duration, error) {
	for range 10 {
		if err := step(); err != nil {
			return 0, err
		}
	}
	if err := s.Synchronize(); err != nil {
		return 0, err
	}
	t := time.Now()
	for range iters {
		if err := step(); err != nil {
			return 0, err
		}
	}
	if err := s.Synchronize(); err != nil {
		return 0, err
	}
	return time.Since(t) / time.Duration(iters), nil
}
