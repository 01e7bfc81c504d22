package main

import (
	"fmt"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/examples/internal/mlp"
)

// graphStep trains on the step captured into a graph, as PyTorch's
// CUDAGraph does it: the graph reads its batch from arrays of its own (x
// and labels, "static inputs"), into which each step copies the batch,
// and adds the batch's losses into total. The first step runs eagerly
// (PyTorch's warm-up: libraries and kernels load outside the capture) and
// the capture follows it; a capture runs nothing, so the step it captured
// is then launched.
type graphStep struct {
	f      cuarray.Ops[float32]
	fi     cuarray.Ops[int32]
	run    stepFunc
	x      *cuarray.Array[float32]
	labels *cuarray.Array[int32]
	total  *cuarray.Array[float32]
	warmed bool // the eager first step ran
	g      *cuarray.Graph
}

// stepFunc is one training step on a batch, returning each example's loss:
// mlp.MLP's Step or StepBF16.
type stepFunc func(x *cuarray.Array[float32], labels *cuarray.Array[int32]) (*cuarray.Array[float32], error)

func newGraphStep(f cuarray.Ops[float32], run stepFunc, cfg Config) (*graphStep, error) {
	gs := &graphStep{f: f, fi: cuarray.On[int32](f.Stream()), run: run}
	var err error
	if gs.x, err = f.New(cfg.Batch, cfg.In); err != nil {
		return nil, err
	}
	if gs.labels, err = gs.fi.New(cfg.Batch); err != nil {
		return nil, err
	}
	if gs.total, err = f.Zeros(cfg.Batch); err != nil {
		return nil, err
	}
	return gs, nil
}

// step trains on batch: the eager first step and the capture, then a copy
// of the batch into the graph's inputs and a launch.
func (gs *graphStep) step(batch mlp.Batch) error {
	if !gs.warmed {
		// The warm-up: the first step, eager, into total.
		gs.warmed = true
		loss, err := gs.run(batch.X, batch.Labels)
		if err != nil {
			return err
		}
		_, err = gs.f.Axpy(gs.total, 1, loss, gs.total)
		return err
	}
	if err := gs.f.Copy(gs.x, batch.X); err != nil {
		return err
	}
	if err := gs.fi.Copy(gs.labels, batch.Labels); err != nil {
		return err
	}
	if gs.g == nil {
		g, err := cuarray.Capture(gs.f.Stream(), func() error {
			loss, err := gs.run(gs.x, gs.labels)
			if err != nil {
				return err
			}
			defer loss.UnsafeFree() // back into the graph's pool
			_, err = gs.f.Axpy(gs.total, 1, loss, gs.total)
			return err
		})
		if err != nil {
			return fmt.Errorf("capturing the step: %w", err)
		}
		gs.g = g
	}
	return gs.g.Launch()
}

func (gs *graphStep) close() {
	if gs.g != nil {
		_ = gs.g.Close()
	}
}
