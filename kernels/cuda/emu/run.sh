#!/usr/bin/env bash
# Runs kernels.cu's kernels on the CPU with g++ (C++20) and checks them
# against plain loops; no GPU or nvcc needed. Takes a few minutes: every
# CUDA thread is an OS thread.
#
#   bash kernels/cuda/emu/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The global-timer read is PTX inline assembly; the emulation does not run
# the spin kernel, so the read becomes a constant.
sed 's/asm volatile(.*);/t = 0;/' "$here/../kernels.cu" >"$work/kernels_emu.cu"
cp "$here/emu.h" "$here/harness.cpp" "$work/"
cp "$here"/*.h "$here"/../*.cuh "$work/" # area headers (index.cuh) and their checks
g++ -std=c++20 -O1 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-variable -o "$work/harness" "$work/harness.cpp"
"$work/harness"
