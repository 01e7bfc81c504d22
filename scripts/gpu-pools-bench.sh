#!/usr/bin/env bash
# The pool measurements for docs/benchmarks.md, in one session on a GPU
# machine, side by side with the allocator anchors (what users would pick
# instead). Needs .gpu from scripts/gpu-build.sh and, for the anchors, a copy
# of ../shared/anchors in .anchors (see docs/testing.md). Output goes to $OUT
# (or .gpu/out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-.gpu/out}; mkdir -p "$out"
[ -d .gpu/bin ] || tar -C .gpu -xJf .gpu/bundle.tar.xz
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
date -u +%Y-%m-%dT%H:%MZ | tee -a "$out/gpu.txt"
export GOCUDA_BACKEND=cuda
echo "== go test -bench: pools and the driver-call binding"
OUT="$out/bench" bash scripts/gpu-run.sh --bench . --benchtime 1s cuda pool_binned pool_split pool_simple pool_cuda pool_none | tee "$out/gobench.txt"
echo "== gocuda bench"
.gpu/bin/gocuda bench --time 500ms | tee "$out/gocuda-bench.txt"
echo "== gocuda replay"
.gpu/bin/gocuda replay --pool all testdata/traces/gpt2_train.trace.gz testdata/traces/resnet50_train.trace.gz | tee "$out/replay.txt"
if [ -d .anchors ]; then
	echo "== anchors"
	bash .anchors/run.sh 2>&1 | tee "$out/anchors.txt"
	if nvcc -O2 -arch=sm_90 -o /tmp/replay_async .anchors/replay_async.cu -lz; then
		for t in testdata/traces/gpt2_train.trace.gz testdata/traces/resnet50_train.trace.gz; do
			echo "replay_async $t"; /tmp/replay_async "$t"
		done 2>&1 | tee "$out/anchor-replay.txt"
	fi
fi
