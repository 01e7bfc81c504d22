#!/usr/bin/env bash
# The colsum bench (exp/colsum/bench.cu) beside torch's x.sum(0) and copy
# of the same shapes, in one run on the GPU:  bash exp/colsum/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -o "$work/bench" exp/colsum/bench.cu
python3 - <<'PY' || echo "torch anchor failed"
import torch
dev = torch.device("cuda:0")
def timed(fn, reps=21, loop=10):
    # As arrays.py (a loop of calls between two events), median of reps loops.
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(loop):
            fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / loop * 1e3)
    return sorted(ts)[len(ts) // 2]
print("torch", torch.__version__)
for rows, cols in [(4096, 4096), (65536, 1024), (1024, 65536)]:
    x = torch.randn(rows, cols, device=dev)
    nb = x.numel() * 4
    tc = timed(lambda: x.clone())
    ts = timed(lambda: x.sum(0))
    cbw, sbw = 2 * nb / tc / 1e3, nb / ts / 1e3
    print(f"torch {rows}x{cols}: clone {tc:.1f} µs {cbw:.0f} GB/s (r+w); sum(0) {ts:.1f} µs {sbw:.0f} GB/s {sbw / cbw:.3f} of clone")
    del x
PY
"$work/bench"
