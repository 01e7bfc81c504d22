// Dataparallel trains examples/train's multilayer perceptron data-parallel:
// each rank has its own device, a copy of the model and its shard of every
// global batch; after the backward pass makes each gradient, the ranks
// average it with an all-reduce (nccl.AllReduceArray, Avg), so every copy
// takes the same update, and the loss is that of single-device training on
// the whole batch, up to the order of float32 sums. The program checks
// that: after training it trains once more on one device with the whole
// batch (-compare, on by default) and prints both losses and their largest
// relative difference.
//
// The model and the data are examples/train's (package internal/mlp, shared
// by both); the gradients are handed to the all-reduce by
// mlp.MLP.StepReduce, layer by layer as the backward pass makes them, so
// that on GPUs a layer's communication overlaps the layers below it.
//
// # Running ranks
//
// Three ways, chosen by flags and the environment:
//
//   - no flag and no launcher's variable: one rank on device 0;
//
//   - -ranks N: N ranks in this process, a goroutine and a device each
//     (devices 0 to N-1). On the host backend this is the only way to run
//     several ranks, and the program makes a host backend with N devices
//     when the default one has fewer; on a machine with N GPUs it runs one
//     rank on each;
//
//   - launched: one process per rank, as torchrun starts them, told its
//     place by the launcher's variables:
//
//     GOCUDA_RANK        this process's rank, 0 to GOCUDA_WORLD_SIZE-1
//     GOCUDA_WORLD_SIZE  the number of ranks
//     GOCUDA_NCCL_ID     the communicator's id, nccl.UniqueID.String of an id
//     the launcher made with nccl.NewUniqueID
//     GOCUDA_LOCAL_RANK  this rank's device on its machine (default GOCUDA_RANK)
//
// The launcher must outlive the ranks' start: NCCL's id names a listener in
// the process that made it. docs/nccl.md (Launching ranks) has a launcher
// in a few lines of Go. gocuda itself never reads these variables; it
// knows them, so they are not reported as unknown knobs.
//
//	go run ./examples/dataparallel -quick -ranks 4   # host backend: 4 ranks, 4 host devices
//	go run ./examples/dataparallel -ranks 1          # one GPU: 1 rank, then single-device
//	go run ./examples/dataparallel -quick -json      # the report as JSON
//
// Each epoch prints its time and mean loss (rank 0's view: the losses are
// all-reduced), then the single-device run's, then the comparison line.
// With -json the report goes to stdout as JSON and the progress to stderr.
// A rank that fails cancels the others' communicator (nccl.NewComm's
// context): they stop with an error instead of waiting for it, and the
// program reports the first failure.
package main
