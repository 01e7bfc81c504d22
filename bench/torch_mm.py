#!/usr/bin/env python3
"""torch.mm on the sizes of gocuda's BenchmarkGemm, measured the same way.

BenchmarkGemm (cuarray/blas_bench_test.go) queues float32 C = A @ B for
square n x n matrices back to back on one stream and synchronizes once at
the end; this does the same with torch.mm(a, b, out=c), timed with CUDA
events around a run of `reps` products, after a warm-up, and reports the
median run of `repeats`. It also times the host's cost of one small call
(n = 16, batches of 128 with a synchronize between them, as
blas.BenchmarkSgemmOverhead does), to set beside our overhead-ns/op.

    python3 bench/torch_mm.py [--sizes 256,1024,4096] [--repeats 11]

TF32 is switched off, as it is for cublasSgemm_v2 by default, so both sides
compute in full float32.
"""
import argparse
import statistics
import time

import torch


def gemm_gflops(n, repeats):
    a = torch.ones(n, n, device="cuda", dtype=torch.float32)
    b = torch.ones(n, n, device="cuda", dtype=torch.float32)
    c = torch.empty(n, n, device="cuda", dtype=torch.float32)
    # Enough products per run that the run takes tens of milliseconds.
    reps = max(3, int(2e10 // (2 * n**3)))
    reps = min(reps, 2000)
    for _ in range(max(3, reps // 4)):  # warm-up: cuBLAS handle, kernel choice, clocks
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    runs = []
    for _ in range(repeats):
        start.record()
        for _ in range(reps):
            torch.mm(a, b, out=c)
        end.record()
        end.synchronize()
        runs.append(start.elapsed_time(end) / 1e3 / reps)  # seconds per product
    per = statistics.median(runs)
    assert c[0, 0].item() == n, "torch.mm gave a wrong product"
    return per, 2 * n**3 / per / 1e9, reps


def call_ns(n, repeats, batch=128):
    a = torch.ones(n, n, device="cuda", dtype=torch.float32)
    b = torch.ones(n, n, device="cuda", dtype=torch.float32)
    c = torch.empty(n, n, device="cuda", dtype=torch.float32)
    for _ in range(1000):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    runs = []
    for _ in range(repeats * 10):
        t = time.perf_counter_ns()
        for _ in range(batch):
            torch.mm(a, b, out=c)
        runs.append((time.perf_counter_ns() - t) / batch)
        torch.cuda.synchronize()
    return statistics.median(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="256,1024,4096")
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.cuda.get_device_name(0)
    print(f"# torch {torch.__version__}, CUDA {torch.version.cuda}, {dev}, "
          f"cuBLAS via torch, TF32 off, median of {args.repeats}")
    print(f"{'op':<24} {'n':>6} {'ms/op':>10} {'GFLOP/s':>10} {'reps/run':>9}")
    for n in [int(s) for s in args.sizes.split(",")]:
        per, gflops, reps = gemm_gflops(n, args.repeats)
        print(f"{'torch.mm float32':<24} {n:>6} {per * 1e3:>10.4f} {gflops:>10.1f} {reps:>9}")
    ns = call_ns(16, args.repeats)
    print(f"{'torch.mm call, n=16':<24} {16:>6} {'':>10} {'':>10} {'':>9}  {ns:.0f} ns/call (host, batches of 128)")


if __name__ == "__main__":
    main()
