package main

import (
	"context"
	"fmt"
	"io"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/graphbench"
)

func runBenchGraphs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return kindUsage("graphs", benchGraphs(ctx, args, stdout, stderr))
}

// benchGraphs times the chain of ../shared/anchors/graphs.py eager and as
// a captured graph (cuarray.Capture), and prints the anchor's line for it.
func benchGraphs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench graphs", "[flags]", "Times the chain of bench anchors' graphs.py on device 0: --steps steps of tanh(z*y + x),\n"+
		"z + y and z * 0.5 on 4096 floats (334 operations for 200 steps), each making its result,\n"+
		"eager and captured once into a graph (cuarray.Capture) and replayed. Each is timed as\n"+
		"graphs.py times it: 10 warm-up steps, then --iters steps and one synchronization.\n"+
		"The line has graphs.py's format, to set beside its output.", stdout)
	steps := fs.Int("steps", graphbench.ChainSteps, "steps of the chain")
	iters := fs.Int("iters", 200, "timed steps")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench graphs takes no arguments, got %q", fs.Args())
	}
	if *steps < 1 || *iters < 1 {
		return usageErrorf("--steps %d --iters %d: give positive counts", *steps, *iters)
	}
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := cuarray.NewStream(0)
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := graphbench.Run(s, *steps, *iters)
	if err != nil {
		return fmt.Errorf("bench graphs: %w", err)
	}
	fmt.Fprintf(stdout, "backend %s, %s\n", b.Name(), s.Device().Info())
	fmt.Fprintln(stdout, r)
	return nil
}
