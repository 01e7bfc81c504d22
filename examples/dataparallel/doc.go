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
// The model and the data are examples/train's (package examples/internal/mlp, shared
// by both); the gradients are handed to the all-reduce by
// mlp.MLP.StepReduce, layer by layer as the backward pass makes them.
//
// # Overlapping communication with the backward pass
//
// With -overlap (on by default) each rank has a second stream for its
// communicator: a layer's dW and db are all-reduced there, in one NCCL
// group (one launch), as soon as the backward pass has queued them, while
// the compute stream goes on with the layers below, and the SGD updates
// are queued after the whole backward pass, each waiting for its layer's
// all-reduce through the arrays' cross-stream ordering (an event, not a
// host wait). This is what PyTorch's DistributedDataParallel does with its
// gradient buckets. It changes no number: a layer's weights serve the
// backward pass only before their own update, whenever that comes. With
// -overlap=false the all-reduces run on the compute stream, in turn with
// the backward pass, to measure the two side by side; the report's
// config says which ran ("overlap"). Overlapped, NCCL's channels take SMs
// from the backward pass's GEMMs: fewer of them (NCCL_MAX_NCHANNELS=4)
// were faster on two H100s (bench/README.md).
//
// # The same data for PyTorch
//
// -save-data DIR writes, from rank 0 before training, the initial weight
// and bias of every layer and every global batch's inputs and labels, as
// raw little-endian float32 and int32 files, with DIR/manifest.json
// naming each file with its dtype and shape (and the config). A weight is
// in × out (a layer is x·W + b), the transpose of nn.Linear.weight.
// bench/torch_ddp.py --data DIR trains PyTorch's
// DistributedDataParallel from exactly these numbers, so that its losses
// and gocuda's agree to float tolerance; bench/README.md has the
// commands. The default size writes about 350 MB.
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
//   - launched: one process per rank, started by gocuda launch, torchrun,
//     srun or mpirun, told its place by that launcher's variables (package
//     rendezvous reads them); the rank forms its communicator with
//     nccl.JoinFromEnv, which meets the others at the launcher's
//     rendezvous and takes rank 0's NCCL id from there.
//
// In one process, and launched (docs/nccl.md, Launching ranks, has each
// launcher's command line):
//
//	go run ./examples/dataparallel -quick -ranks 4   # host backend: 4 ranks, 4 host devices
//	go run ./examples/dataparallel -ranks 1          # one GPU: 1 rank, then single-device
//	go run ./examples/dataparallel -quick -json      # the report as JSON
//	go run ./examples/dataparallel -quick -ranks 2 -overlap=false
//	go run ./examples/dataparallel -quick -ranks 2 -save-data /tmp/dp
//	gocuda launch -n 2 -- ./dataparallel -json       # two GPUs, a process each
//	torchrun --nproc-per-node 2 --no-python ./dataparallel
//
// Each epoch prints its time and mean loss (rank 0's view: the losses are
// all-reduced), then the single-device run's, then the comparison line.
// With -json the report goes to stdout as JSON and the progress to stderr.
// A rank that fails cancels the others' communicator (nccl.NewComm's
// context): they stop with an error instead of waiting for it, and the
// program reports the first failure.
package main
