// Train trains a small multilayer perceptron on synthetic data, written as
// a user would write it: every step makes fresh arrays for activations and
// gradients and frees nothing by hand. The device memory behind them is
// garbage the moment a step returns, but Go's collector sees only the small
// array headers; gocuda's pressure layer runs the collector early when
// device memory nears the limit (GOCUDA_GC_EARLY), and retries an
// allocation that fails after collecting. The program prints the time and
// loss of each epoch as it ends and, at the end, what the collector cost.
// With no size given it trains the H100-sized model on a GPU and a
// host-sized one on the host backend.
//
//	go run ./examples/train                                  # sized by backend
//	go run ./examples/train -quick                           # seconds, any backend
//	go run ./examples/train -hard-limit 4GiB -gc-early=true  # the H100 run
//	go run ./examples/train -hard-limit 4GiB -gc-early=false -json
//	go run ./examples/train -graph                           # the step as a replayed graph
//
// bench/pytorch_train.py is the same model in PyTorch; bench/README.md runs
// the two side by side.
package main
