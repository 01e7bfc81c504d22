#!/usr/bin/env bash
# The onesweep sort bench (issue 30): bash exp/sort16/run.sh from the
# repository root on the GPU machine. Builds bench.cu against
# kernels/cuda/sort.cuh and sort16.cuh, runs it, then times CuPy's and
# torch's sort of 16 Mi float32 the same way (median of 25, CUDA events).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp /tmp/sort16_bench.XXXXXX)
trap 'rm -f "$bin"' EXIT
nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -o "$bin" exp/sort16/bench.cu
"$bin"
python3 exp/sort16/anchors.py || echo "anchors: python3 failed"
