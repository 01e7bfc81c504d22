#!/usr/bin/env bash
# Runs kernels.cu's kernels on the CPU with g++ (C++20) and checks them
# against plain loops; no GPU or nvcc needed. Takes a few minutes: every
# CUDA thread is an OS thread.
#
#   bash kernels/cuda/emu/run.sh [group ...]
#
# With groups (half optable scansort sort sort16 cubsort elementwise reduce strided
# strided_copy nn reduce_axes index half_ops int_types: harness.cpp's main) it runs only those.
# EMU_SORT_ROWS=1 with the sort group runs only its row sort and top-k.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The global-timer read is PTX inline assembly; the emulation does not run
# the spin kernel, so the read becomes a constant.
sed 's/asm volatile(.*);/t = 0;/' "$here/../kernels.cu" >"$work/kernels_emu.cu"
# kernels.cu's includes (the area headers, the table's ops_gen.cuh and optable.cuh)
# and the harness's parts (harness_*.h and .cpp, *.inc, the table's checks).
cp "$here"/*.h "$here"/*.inc "$here"/*.cpp "$here"/../*.cuh "$work/"
g++ -std=c++20 -O1 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-variable -o "$work/harness" "$work/harness.cpp"
EMU_ONLY=$(IFS=,; echo "$*") "$work/harness"
