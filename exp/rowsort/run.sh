#!/usr/bin/env bash
# The row sort bench (see bench.cu), then torch.sort(x, 1) timed the same
# way in the same run. From the repository root: bash exp/rowsort/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp /tmp/rowsort_bench.XXXXXX)
trap 'rm -f "$bin"' EXIT
nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -I "$here" -o "$bin" "$here/bench.cu" -lpthread
"$bin"
python3 "$here/anchor.py"
