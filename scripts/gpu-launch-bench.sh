#!/usr/bin/env bash
# The launch path of issue 28 on the GPU machine, in one run: the C floor
# (cuLaunchKernel from a C loop with its parameters built once, cuda's
# BenchmarkLaunch driver-ns/op), the binding's two launches (Stream.Launch,
# Stream.LaunchWords), a whole kernels.AddScalar, cuarray's in-place and
# allocating Add on 4096 floats (BenchmarkSmallOp), the in-place Add in bursts
# alternating with the C floor (cuda's BenchmarkSmallOpOverFloor), New + UnsafeFree of
# 1 MiB beside the pool alone. docs/benchmarks.md ("where the microseconds
# go") reads these lines.
#
# Here (Go, no GPU):          scripts/gpu-build.sh ./cuda ./kernels ./cuarray
# There (.gpu carried over):  bash scripts/gpu-launch-bench.sh [COUNT]
#
# COUNT (default 3) runs of each benchmark, one after the other, so that the
# floor and gocuda's figures come from the same minutes on the same GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
count=${1:-3}
date -u +"%Y-%m-%d %H:%M UTC"
for i in $(seq "$count"); do
	echo "== run $i of $count"
	bash scripts/gpu-run.sh cuda kernels cuarray \
		--bench '^(BenchmarkLaunch|BenchmarkLaunchWords|BenchmarkSmallOp|BenchmarkSmallOpOverFloor|BenchmarkNewFree1MiB|BenchmarkPoolAllocFree1MiB)$' \
		| grep -E '^Benchmark|^gpu:|FAIL'
done
