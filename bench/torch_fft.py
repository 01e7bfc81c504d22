#!/usr/bin/env python3
"""torch.fft on the cases of gocuda's FFT benchmark, timed the same way, for
the table beside gocuda's (gocuda bench fft, BenchmarkTransforms in package
cufft).

Each case is OP:SHAPE, as gocuda bench fft --cases takes them: fft, ifft,
fft2, rfft, irfft (the shape is the real side's for rfft and irfft), all
complex64 / float32, written into preallocated outputs (out=). torch.fft's
default normalisation, "backward", is gocuda's: the inverses divide by n.
Each case is --iters transforms queued back to back between two CUDA events,
after a warm-up that makes cuFFT's plan; the median of --repeats is kept, per
transform. GB/s (1e9 bytes) counts one read of the input and one write of the
output, as gocuda does.

    python3 bench/torch_fft.py
    .gpu/bin/gocuda bench fft --json go_fft.json
    python3 bench/torch_fft.py --go-json go_fft.json

With --go-json it takes the cases, --iters and --repeats from gocuda's file
(unless given) and ends with one markdown table of both and the ratio of
gocuda's time to torch's for each case (at most 1 is as fast), for
docs/benchmarks.md. Run the two one after the other on the same machine.
"""
import argparse
import json
import statistics
import sys

import torch

CASES = "fft:1048576,fft:1024x1024,ifft:1048576,fft2:4096x4096,rfft:16777216,irfft:16777216"
OPS = ("fft", "ifft", "fft2", "rfft", "irfft")


def parse_cases(text):
    cases = []
    for c in text.split(","):
        op, _, shape = c.strip().partition(":")
        if op not in OPS or not shape:
            sys.exit(f"torch_fft: --cases {c.strip()!r}: give OP:SHAPE, OP one of {', '.join(OPS)}, SHAPE like 1024x1024")
        try:
            dims = [int(d) for d in shape.split("x")]
        except ValueError:
            sys.exit(f"torch_fft: --cases {c.strip()!r}: {shape!r} is not a shape like 1024x1024")
        cases.append((op, dims))
    return cases


def shape_text(dims):
    return "x".join(str(d) for d in dims)


def make(op, dims, dev):
    """The input, the output and the transform of one case; the bytes one
    read of the input and one write of the output move."""
    half = dims[:-1] + [dims[-1] // 2 + 1]
    n = 1
    for d in dims:
        n *= d
    nh = n // dims[-1] * half[-1]
    if op in ("fft", "ifft", "fft2"):
        x = torch.zeros(dims, dtype=torch.complex64, device=dev)
        y = torch.empty_like(x)
        f = {"fft": torch.fft.fft, "ifft": torch.fft.ifft, "fft2": torch.fft.fft2}[op]
        return (lambda: f(x, out=y)), 16 * n
    if op == "rfft":
        x = torch.zeros(dims, dtype=torch.float32, device=dev)
        y = torch.empty(half, dtype=torch.complex64, device=dev)
        return (lambda: torch.fft.rfft(x, out=y)), 4 * n + 8 * nh
    x = torch.zeros(half, dtype=torch.complex64, device=dev)
    y = torch.empty(dims, dtype=torch.float32, device=dev)
    return (lambda: torch.fft.irfft(x, n=dims[-1], out=y)), 8 * nh + 4 * n


def time_case(run, iters, repeats):
    """Seconds per transform: the median repeat of iters transforms between
    two CUDA events."""
    run()  # warm-up: cuFFT's plan, the caching allocator
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    runs = []
    for _ in range(repeats):
        start.record()
        for _ in range(iters):
            run()
        end.record()
        end.synchronize()
        runs.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", help=f"OP:SHAPE cases, comma-separated (default {CASES}, or gocuda's)")
    ap.add_argument("--iters", type=int, help="transforms per repeat (default 20, or gocuda's)")
    ap.add_argument("--repeats", type=int, help="repeats, median kept (default 5, or gocuda's)")
    ap.add_argument("--go-json", help="gocuda bench fft --json's file: print both side by side")
    ap.add_argument("--json", help="also write torch's rows here")
    args = ap.parse_args()
    go = None
    if args.go_json:
        with open(args.go_json) as f:
            go = json.load(f)
    if args.cases:
        cases = parse_cases(args.cases)
    elif go:
        cases = [(r["op"], r["shape"]) for r in go["rows"]]
    else:
        cases = parse_cases(CASES)
    pick = lambda v, key, default: v if v is not None else go[key] if go else default
    iters, repeats = pick(args.iters, "iters", 20), pick(args.repeats, "repeats", 5)
    if go and (iters, repeats) != (go["iters"], go["repeats"]):
        print(f"torch_fft: warning: gocuda ran --iters {go['iters']} --repeats {go['repeats']}, this {iters} and {repeats}",
              file=sys.stderr)
    if not torch.cuda.is_available():
        sys.exit("torch_fft: needs a GPU (torch.cuda.is_available() is False)")
    dev = torch.device("cuda", 0)

    rows = []
    for op, dims in cases:
        run, nbytes = make(op, dims, dev)
        sec = time_case(run, iters, repeats)
        rows.append({"op": op, "shape": dims, "bytes": nbytes, "seconds": sec, "GBps": nbytes / sec / 1e9})
        del run
        torch.cuda.empty_cache()
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}; "
          f"{iters} transforms between CUDA events, median of {repeats}")
    print("| op | shape | us | GB/s |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['op']} | {shape_text(r['shape'])} | {r['seconds'] * 1e6:.1f} | {r['GBps']:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not go:
        return

    mine = {(r["op"], tuple(r["shape"])): r for r in rows}
    print(f"\ngocuda ({go['backend']} backend, {go['device']}, {go['library']}) beside torch.fft in the same session; "
          "time ratio gocuda/torch: at most 1 is as fast")
    print("| op | shape | gocuda us | torch us | gocuda GB/s | torch GB/s | time gocuda/torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for g in go["rows"]:
        t = mine.get((g["op"], tuple(g["shape"])))
        if t is None:
            print(f"torch_fft: warning: {g['op']} {shape_text(g['shape'])} was not timed here", file=sys.stderr)
            continue
        print(f"| {g['op']} | {shape_text(g['shape'])} | {g['seconds'] * 1e6:.1f} | {t['seconds'] * 1e6:.1f} "
              f"| {g['GBps']:.1f} | {t['GBps']:.1f} | {g['seconds'] / t['seconds']:.2f} |")


if __name__ == "__main__":
    main()
