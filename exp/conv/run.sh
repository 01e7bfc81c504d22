#!/usr/bin/env bash
# Narrowing-conversion bench (issue 27): torch's figures first, then the
# drivers of kernels/cuda/optable.cuh over a grid sweep, in one run.
#   bash exp/conv/run.sh        (from the repository root, on the GPU machine)
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - >"$work/anchors" <<'PY'
import torch
dev = torch.device("cuda:0")
n = 4096
x = torch.randn(n, n, device=dev)
xd = torch.randn(n, n, device=dev, dtype=torch.float64)
y = torch.empty_like(x)

def timed(fn, iters=20):
    # arrays.py's way: the mean of a back-to-back loop, the median of 5 loops
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / iters * 1e3)
    return sorted(ts)[len(ts) // 2]

nb = n * n
for name, fn, per in [("copy", lambda: y.copy_(x), 8), ("bf16", lambda: x.to(torch.bfloat16), 6),
                      ("f16", lambda: x.to(torch.float16), 6), ("f64f32", lambda: xd.to(torch.float32), 12),
                      ("u8", lambda: x.to(torch.uint8), 5)]:
    us = timed(fn)
    print(name, nb * per / us / 1e3)
PY
awk '{printf "torch %-7s %7.0f GB/s\n", $1, $2}' "$work/anchors"
nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -o "$work/bench" exp/conv/bench.cu
"$work/bench" "$work/anchors"
