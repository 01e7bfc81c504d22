package graphbench_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/graphbench"
)

func TestOpsCountsTheAnchorsOperations(t *testing.T) {
	for _, c := range []struct{ steps, ops int }{{1, 3}, {2, 4}, {3, 5}, {4, 8}, {200, graphbench.ChainOps}} {
		assert.Equal(t, c.ops, graphbench.Ops(c.steps), "%d steps", c.steps)
	}
}

// Run times both forms and the graph recorded one node per operation.
func TestRunTimesEagerAndGraph(t *testing.T) {
	s, err := cuarray.NewStream(0)
	require.NoError(t, err)
	defer s.Close()
	r, err := graphbench.Run(s, 20, 3)
	require.NoError(t, err)
	assert.Equal(t, graphbench.Ops(20), r.Nodes)
	assert.Positive(t, r.Eager)
	assert.Positive(t, r.Graph)
	assert.Regexp(t, `^chain 20 ops x 4096 floats: eager +\d+\.\d us/step  graph +\d+\.\d us/step  eager/graph +\d+\.\d\d  \(\d+\.\d\d vs \d+\.\d\d us/op; 34 operations a step\)$`, r.String())
	_, err = graphbench.Run(s, 0, 3)
	assert.ErrorContains(t, err, "both must be positive")
}
