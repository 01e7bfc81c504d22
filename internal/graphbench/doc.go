// Package graphbench is the chain workload of ../shared/anchors/graphs.py
// (the anchor's 200 steps of tanh(z*y + x), z + y and z * 0.5 on 4096
// floats: 334 small operations), run eager and as a captured graph, for
// cuarray's BenchmarkGraphChain and "gocuda bench graphs", so that both
// time the same work the anchor does.
//
//	s, _ := cuarray.NewStream(0)
//	r, err := graphbench.Run(s, graphbench.ChainSteps, 200)
//	fmt.Println(r) // chain 200 ops x 4096 floats: eager ... us/step  graph ... us/step ...
package graphbench
