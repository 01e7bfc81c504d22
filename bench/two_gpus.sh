#!/usr/bin/env bash
# Every two-GPU measurement of docs/benchmarks.md's "Two GPUs" section, each
# beside its anchor in the same run, on a machine with two GPUs, torch and
# (for the mpirun line) Open MPI. Build here with scripts/gpu-build.sh, carry
# .gpu, and there, from the repository root:
#
#   bash bench/two_gpus.sh            # everything (about 8 minutes)
#   bash bench/two_gpus.sh peer ddp   # some parts: tests peer allreduce ddp launchers net
#
# With a device budget, run the parts in two or three calls (tests alone
# first): a call cut short at its limit brings back only what was packed.
#
# Output goes to stdout; the JSON reports and the tests' logs are packed into
# $OUT/two_gpus.tar.gz (or .gpu/logs/). NVLink multicast stays off throughout.
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export GOCUDA_BACKEND=cuda PYTHONUNBUFFERED=1
dest=${OUT:-.gpu/logs}
out=$(mktemp -d)
mkdir -p "$out/j" "$dest"
# gpu-run.sh writes its logs to $OUT: one folder a run, kept in the archive.
run=0
gpurun() { run=$((run + 1)); OUT=$out/j/tests$run bash scripts/gpu-run.sh "$@"; pack; }
if [ ! -f .gpu/bin/MANIFEST ] || [ .gpu/bundle.tar.xz -nt .gpu/bin/MANIFEST ]; then
	rm -rf .gpu/bin && tar -C .gpu -xJf .gpu/bundle.tar.xz && touch .gpu/bin/MANIFEST
fi
G=$PWD/.gpu/bin/gocuda DP=$PWD/.gpu/bin/dataparallel
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(tests peer allreduce net ddp launchers)
want() { printf '%s\n' "${parts[@]}" | grep -qx "$1"; }
# The archive is remade at each section, so that a run cut short still
# brings back what it measured.
pack() { tar -C "$out" -czf "$dest/two_gpus.tar.gz" j; }
section() { pack; echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
exec > >(tee "$out/j/stdout.log") 2>&1
# NCCL's network transport between the two GPUs of one machine: no NVLink
# or PCIe peer path, no shared memory, sockets on the loopback, which is
# the path two machines take.
net=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo)

nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "NCCL", torch.cuda.nccl.version())'

if want tests; then
	section "tests that need two GPUs, and what changed"
	# Each package under a test timeout of its own: a hang fails its
	# package with every goroutine's stack in the log (Go's -test.timeout),
	# and the rest still runs.
	gpurun --timeout 150s backend_auto cuda gcpressure cmd_gocuda rendezvous examples_dataparallel examples_multigpu examples_train
	gpurun --timeout 150s --run 'Device|Peer|Across' cuarray
	gpurun --timeout 240s nccl
	section "cross-device tests under compute-sanitizer memcheck"
	gpurun --timeout 150s --sanitizer memcheck --run 'Conforms' backend_auto
	gpurun --timeout 150s --sanitizer memcheck --run 'TestCopyAcrossDevices|TestToDeviceAndMixedDeviceErrors|TestGemmArraysOfDifferentDevices' cuarray
	gpurun --timeout 150s --sanitizer memcheck --run 'TestPeerAccessAcrossDevices' cuda
	gpurun --timeout 150s --sanitizer memcheck examples_multigpu
	gpurun --timeout 240s --sanitizer memcheck --run 'TestArrayCollectivesOn1To4Ranks|TestRankThatFailsFailsTheOthers' nccl
fi

if want peer; then
	section "peer copies: cuarray beside torch copy_ and cudaMemcpyPeer"
	timeout 120 "$G" bench peer --quiet --json "$out/j/peer.json" &&
		timeout 120 python3 bench/torch_peer.py --go-json "$out/j/peer.json" --json "$out/j/torch_peer.json"
fi

if want allreduce; then
	section "all-reduce over NVLink: one process driving both GPUs, a process per GPU, torch"
	timeout 120 "$G" bench allreduce --json "$out/j/ar_one.json"
	timeout 120 "$G" launch -n 2 -- "$G" bench allreduce --json "$out/j/ar_launch.json"
	timeout 150 python3 bench/torch_allreduce.py --ranks 2 --json "$out/j/ar_torch.json" \
		--go-json "$out/j/ar_one.json" --go-json "$out/j/ar_launch.json"
fi

if want ddp; then
	section "data-parallel training beside PyTorch DDP (same weights and batches)"
	timeout 120 "$DP" -ranks 2 -json >"$out/j/dp_on.json"
	timeout 120 "$DP" -ranks 2 -json -overlap=false -compare=false >"$out/j/dp_off.json"
	timeout 120 "$G" launch -n 2 -- "$DP" -json -compare=false >"$out/j/dp_launch.json"
	timeout 120 env NCCL_MAX_NCHANNELS=4 "$G" launch -n 2 -- "$DP" -json -compare=false >"$out/j/dp_launch_4ch.json"
	timeout 120 "$DP" -ranks 2 -compare=false -save-data /tmp/dpdata >/dev/null
	timeout 240 python3 bench/torch_ddp.py --data /tmp/dpdata --go-json "$out/j/dp_on.json" --go-json "$out/j/dp_off.json" \
		--go-json "$out/j/dp_launch.json" --go-json "$out/j/dp_launch_4ch.json"
	timeout 120 env NCCL_MAX_NCHANNELS=4 python3 bench/torch_ddp.py --data /tmp/dpdata --go-json "$out/j/dp_launch_4ch.json"
fi

if want launchers; then
	section "the launchers people run: torchrun, mpirun, srun's variables"
	quick=(-quick -compare=false -json)
	echo "-- torchrun --no-python --nproc-per-node 2"
	timeout 120 torchrun --nproc-per-node 2 --no-python "$DP" "${quick[@]}" >"$out/j/dp_torchrun.json" 2>"$out/j/dp_torchrun.err"
	echo "torchrun exit $?"; grep -E '"launcher"|"world_size"|"loss"' "$out/j/dp_torchrun.json" | head -4; tail -3 "$out/j/dp_torchrun.err"
	echo "-- mpirun -np 2"
	timeout 120 mpirun --allow-run-as-root -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29651 -x NCCL_NVLS_ENABLE=0 -x GOCUDA_BACKEND=cuda \
		"$DP" "${quick[@]}" >"$out/j/dp_mpirun.json" 2>"$out/j/dp_mpirun.err"; echo "mpirun exit $?"
	grep -E '"launcher"|"world_size"|"loss"' "$out/j/dp_mpirun.json" | head -4; tail -3 "$out/j/dp_mpirun.err"
	echo "-- srun's variables, as srun sets them for a step of two tasks"
	for r in 0 1; do
		SLURM_JOB_ID=4242 SLURM_STEP_ID=0 SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r SLURM_NODEID=0 \
			MASTER_ADDR=127.0.0.1 MASTER_PORT=29652 timeout 120 "$DP" "${quick[@]}" >"$out/j/dp_srun_$r.json" &
	done
	wait
	grep -E '"launcher"|"world_size"|"loss"' "$out/j/dp_srun_0.json" | head -4
	echo "-- a rank that dies under gocuda launch: the other is stopped, the exit code passed on"
	timeout 60 "$G" launch -n 2 -- bash -c '[ "$GOCUDA_RANK" = 1 ] && exit 7; sleep 30'; echo "launch exit $? (want 7, well before 30 s)"
fi

if want net; then
	section "all-reduce on NCCL's network transport (sockets on the loopback)"
	timeout 150 env "${net[@]}" "$G" launch -n 2 -- "$G" bench allreduce --register off --json "$out/j/ar_net.json"
	timeout 150 env "${net[@]}" python3 bench/torch_allreduce.py --ranks 2 --port 29513 --go-json "$out/j/ar_net.json"
	section "data-parallel training on the network transport"
	timeout 120 env "${net[@]}" "$G" launch -n 2 -- "$DP" -json -compare=false >"$out/j/dp_net.json"
	grep -E '"step_ms"' "$out/j/dp_net.json"
fi

section done
pack
