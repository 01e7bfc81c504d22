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

The half-precision, TF32 and batched products of `gocuda bench gemm` are
timed with --cases (its TYPE:N and TYPE:BATCHxN: f32, tf32, f16, bf16;
torch.mm, or torch.bmm for a batch, on matrices of ones with C in the
inputs' type), or with --go-json, which takes the cases, each case's
iterations and the repeats from gocuda's file and ends with one markdown
table of both and the ratio of gocuda's TFLOP/s to torch's (issue 27's goal
is 0.95 or more):

    .gpu/bin/gocuda bench gemm --json go_gemm.json
    python3 bench/torch_mm.py --go-json go_gemm.json
"""
import argparse
import json
import statistics
import sys
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


DTYPES = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def parse_cases(text):
    """TYPE:N or TYPE:BATCHxN, as gocuda bench gemm --cases."""
    out = []
    for c in text.split(","):
        typ, _, size = c.strip().partition(":")
        if typ not in DTYPES or not size:
            sys.exit(f"torch_mm: --cases {c!r}: give TYPE:N or TYPE:BATCHxN, TYPE one of {', '.join(DTYPES)}")
        dims = [int(d) for d in size.split("x")]
        out.append({"case": c.strip(), "type": typ, "batch": dims[0] if len(dims) == 2 else 1, "n": dims[-1]})
    return out


def case_seconds(case, iters, repeats):
    """One product's (or batch's) seconds: the median repeat of `iters`
    products queued back to back, timed with CUDA events, after a warm-up,
    as gocuda bench gemm times them (it synchronizes and reads the clock)."""
    typ, batch, n = case["type"], case["batch"], case["n"]
    torch.backends.cuda.matmul.allow_tf32 = typ == "tf32"
    shape = (batch, n, n) if batch > 1 else (n, n)
    a = torch.ones(*shape, device="cuda", dtype=DTYPES[typ])
    b = torch.ones(*shape, device="cuda", dtype=DTYPES[typ])
    c = torch.empty(*shape, device="cuda", dtype=DTYPES[typ])
    mm = torch.bmm if batch > 1 else torch.mm
    mm(a, b, out=c)
    torch.cuda.synchronize()
    assert c.flatten()[0].item() == n, f"torch gave a wrong product for {case['case']}"
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    runs = []
    for _ in range(repeats):
        start.record()
        for _ in range(iters):
            mm(a, b, out=c)
        end.record()
        end.synchronize()
        runs.append(start.elapsed_time(end) / 1e3 / iters)
    torch.backends.cuda.matmul.allow_tf32 = False
    return statistics.median(runs)


def run_cases(args):
    go = None
    if args.go_json:
        with open(args.go_json) as f:
            go = json.load(f)
    cases = parse_cases(args.cases) if args.cases else go["rows"]
    # gocuda's row for each case, for its iterations and TFLOP/s.
    go_rows = {r["case"]: r for r in go["rows"]} if go else {}
    repeats = go["repeats"] if go and args.repeats_given is None else args.repeats
    dev = torch.cuda.get_device_name(0)
    print(f"# torch {torch.__version__}, CUDA {torch.version.cuda}, {dev}, median of {repeats}")
    if go:
        print(f"# gocuda: backend {go['backend']}, {go['device']}, {go['library']}, median of {go['repeats']}")
    rows = []
    for case in cases:
        flops = 2 * case["batch"] * case["n"] ** 3
        iters = go_rows.get(case["case"], case).get("iters") or min(2000, max(3, int(2e13 // flops)))
        sec = case_seconds(case, iters, repeats)
        rows.append((case, iters, sec, flops / sec / 1e12))
    print()
    if not go:
        print("| case | torch op | iters | ms | TFLOP/s |")
        print("|---|---|---:|---:|---:|")
        for case, iters, sec, tf in rows:
            op = "torch.bmm" if case["batch"] > 1 else "torch.mm"
            print(f"| {case['case']} | {op} | {iters} | {sec * 1e3:.4f} | {tf:.1f} |")
        return
    print("| case | gocuda TFLOP/s | torch TFLOP/s | gocuda / torch | goal 0.95 |")
    print("|---|---:|---:|---:|---|")
    for case, iters, sec, tf in rows:
        g = go_rows.get(case["case"], {}).get("tflops")
        if g is None:
            print(f"| {case['case']} | - | {tf:.1f} | - | - |")
            continue
        ratio = g / tf
        print(f"| {case['case']} | {g:.1f} | {tf:.1f} | {ratio:.3f} | {'met' if ratio >= 0.95 else 'not met'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="256,1024,4096")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--cases", help="gocuda bench gemm's TYPE:N or TYPE:BATCHxN cases: f32, tf32, f16, bf16")
    ap.add_argument("--go-json", help="gocuda bench gemm --json's file: print both side by side")
    args = ap.parse_args()
    args.repeats_given = args.repeats
    if args.cases or args.go_json:
        args.repeats = args.repeats or 5
        run_cases(args)
        return
    args.repeats = args.repeats or 11
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
