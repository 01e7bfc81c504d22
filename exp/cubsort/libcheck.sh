#!/usr/bin/env bash
# exp/cubsort/libcheck.sh: compiles the library's kernels/cuda/cubsort.cuh
# as kernels.cu does (CUB's headers, the prelude, sort.cuh) and runs its
# kernels through kernels/cubsort_gpu.go's sequence (libcheck.cu), in
# seconds, before scripts/gen-ptx.sh. Run from the repository root on the
# GPU machine: bash exp/cubsort/libcheck.sh
set -u
cd "$(dirname "$0")/../.."
B=$(mktemp /tmp/cubsort-libcheck.XXXXXX)
trap 'rm -f "$B" "$B.log"' EXIT
t0=$(date +%s)
if ! nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -o "$B" exp/cubsort/libcheck.cu >"$B.log" 2>&1; then
	echo "COMPILE FAILED ($(( $(date +%s) - t0 )) s): kernels/cuda/cubsort.cuh with CUB from $(nvcc --version | tail -1)"
	grep -m 15 -E 'error' "$B.log" | cut -c1-230
	exit 1
fi
echo "compiled in $(( $(date +%s) - t0 )) s"
timeout 120 "$B" 2>&1 | head -n 40
exit "${PIPESTATUS[0]}"
