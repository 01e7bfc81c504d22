#!/usr/bin/env python3
"""Copies between two GPUs with torch and with cudaMemcpyPeer (through CuPy),
for the table beside gocuda's (gocuda bench peer, BenchmarkCopyAcrossDevices
in package cuarray).

Four copies of the same bytes from --src to --dst (cuda:0 to cuda:1), peer
access on (torch enables it itself on its first copy; for CuPy it is enabled
here both ways):

  torch copy_              dst.copy_(src)
  torch copy_ non_blocking dst.copy_(src, non_blocking=True)
  cudaMemcpyPeer           cupy.cuda.runtime.memcpyPeer
  cudaMemcpyPeerAsync      cupy.cuda.runtime.memcpyPeerAsync on a stream of --dst

Each is timed as gocuda bench peer times cuarray.Copy: after a warm-up,
pipelined GB/s (1e9 bytes) is --iters copies then synchronizing both devices,
timed with time.perf_counter, best of --repeats; the round trip is one copy
then synchronizing what shows it done (the destination device for torch, which
copies on the source's stream and makes the destination's stream wait for it;
the copy's stream or device for CuPy), median of --iters.

    NCCL_NVLS_ENABLE=0 python3 bench/torch_peer.py
    .gpu/bin/gocuda bench peer --json go_peer.json
    NCCL_NVLS_ENABLE=0 python3 bench/torch_peer.py --go-json go_peer.json

With --go-json it takes the sizes, devices, --iters and --repeats from gocuda's
file (unless given) and ends with one markdown table of both and the ratios
gocuda/torch at each size, for docs/benchmarks.md. Run the two one after the
other on the same machine, and keep every run: only the ratios mean anything.

NVLink multicast stays off (NCCL_NVLS_ENABLE=0 is set here if unset), as in
every gocuda run on these machines.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch

SIZES = "4KiB,1MiB,16MiB,256MiB"
UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_size(s):
    m = re.fullmatch(r"\s*(\d+)\s*(B|KiB|MiB|GiB)?\s*", s)
    if not m:
        sys.exit(f"torch_peer: --sizes {s.strip()!r} is not a size; use forms like 512B, 64KiB, 1MiB")
    return int(m.group(1)) * UNITS[m.group(2) or ""]


def ibytes(n):
    for unit in ("GiB", "MiB", "KiB"):
        if n >= UNITS[unit] and n % UNITS[unit] == 0:
            return f"{n // UNITS[unit]} {unit}"
    return f"{n} B"


def measure(copy, sync_done, sync_all, iters, repeats):
    """The best repeat's seconds for iters pipelined copies and the median
    round trip in seconds, timed as gocuda bench peer times its copies."""
    for _ in range(3):  # warm-up: the first copy links the pair
        copy()
    sync_all()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            copy()
        sync_all()
        best = min(best, time.perf_counter() - t0)
    rt = []
    for _ in range(iters):
        t0 = time.perf_counter()
        copy()
        sync_done()
        rt.append(time.perf_counter() - t0)
    return best, statistics.median(rt)


def enable_peer(cp, dev, peer):
    """Lets dev reach peer's memory, once; already enabled is fine."""
    with cp.cuda.Device(dev):
        try:
            cp.cuda.runtime.deviceEnablePeerAccess(peer)
        except cp.cuda.runtime.CUDARuntimeError as e:
            if "AlreadyEnabled" not in str(e):  # cudaErrorPeerAccessAlreadyEnabled
                raise


def run(sizes, a, b, iters, repeats):
    ta, tb = torch.device("cuda", a), torch.device("cuda", b)

    def sync_all():
        torch.cuda.synchronize(ta)
        torch.cuda.synchronize(tb)

    try:
        import cupy as cp
    except ImportError:
        cp = None
        print("torch_peer: no CuPy: cudaMemcpyPeer not timed", file=sys.stderr)
    if cp is not None:
        enable_peer(cp, b, a)
        enable_peer(cp, a, b)
        with cp.cuda.Device(b):
            stream = cp.cuda.Stream(non_blocking=True)  # as gocuda's NewStream

    rows = []
    for n in sizes:
        src = torch.empty(n, dtype=torch.uint8, device=ta)
        dst = torch.empty(n, dtype=torch.uint8, device=tb)
        cases = [
            ("torch copy_", lambda: dst.copy_(src), lambda: torch.cuda.synchronize(tb)),
            ("torch copy_ non_blocking", lambda: dst.copy_(src, non_blocking=True), lambda: torch.cuda.synchronize(tb)),
        ]
        if cp is not None:
            # CuPy shares torch's primary contexts; raw pointers of torch's
            # tensors keep one allocation per device for both libraries.
            ps, pd = src.data_ptr(), dst.data_ptr()

            def peer():
                with cp.cuda.Device(b):
                    cp.cuda.runtime.memcpyPeer(pd, b, ps, a, n)

            def peer_async():
                with cp.cuda.Device(b):
                    cp.cuda.runtime.memcpyPeerAsync(pd, b, ps, a, n, stream.ptr)

            cases += [
                ("cudaMemcpyPeer", peer, lambda: torch.cuda.synchronize(tb)),
                ("cudaMemcpyPeerAsync", peer_async, stream.synchronize),
            ]
        for name, copy, sync_done in cases:
            best, rt = measure(copy, sync_done, sync_all, iters, repeats)
            rows.append({"bytes": n, "name": name, "pipelined_seconds": best,
                         "pipelined_GBps": n * iters / best / 1e9, "roundtrip_us": rt * 1e6})
        del src, dst
        torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", help=f"comma-separated sizes (default {SIZES}, or gocuda's)")
    ap.add_argument("--iters", type=int, help="copies per pipelined repeat, and round trips (default 100, or gocuda's)")
    ap.add_argument("--repeats", type=int, help="pipelined repeats, best kept (default 5, or gocuda's)")
    ap.add_argument("--src", type=int, help="source device (default 0, or gocuda's)")
    ap.add_argument("--dst", type=int, help="destination device (default 1, or gocuda's)")
    ap.add_argument("--go-json", help="gocuda bench peer --json's file: print both side by side")
    ap.add_argument("--json", help="also write torch's rows here")
    args = ap.parse_args()
    go = None
    if args.go_json:
        with open(args.go_json) as f:
            go = json.load(f)
    sizes = ([parse_size(s) for s in args.sizes.split(",")] if args.sizes
             else sorted({r["bytes"] for r in go["rows"]}) if go else [parse_size(s) for s in SIZES.split(",")])
    pick = lambda v, key, default: v if v is not None else go[key] if go else default
    iters, repeats = pick(args.iters, "iters", 100), pick(args.repeats, "repeats", 5)
    a, b = pick(args.src, "from", 0), pick(args.dst, "to", 1)
    if go and (iters, repeats) != (go["iters"], go["repeats"]):
        print(f"torch_peer: warning: gocuda ran --iters {go['iters']} --repeats {go['repeats']}, this {iters} and {repeats}",
              file=sys.stderr)
    if max(a, b) >= torch.cuda.device_count():
        sys.exit(f"torch_peer: needs GPUs {a} and {b}, found {torch.cuda.device_count()}")
    if a == b:
        sys.exit(f"torch_peer: --src and --dst are both {a}: give two different devices")

    rows = run(sizes, a, b, iters, repeats)
    print(f"torch {torch.__version__}, cuda:{a} {torch.cuda.get_device_name(a)} -> cuda:{b} {torch.cuda.get_device_name(b)}, "
          f"peer access {'possible' if torch.cuda.can_device_access_peer(b, a) else 'impossible'}; "
          f"{iters} copies then synchronization, best of {repeats}; round trip median of {iters}")
    print("| size | copy | GB/s | round trip (us) |")
    print("|---:|---|---:|---:|")
    for r in rows:
        print(f"| {ibytes(r['bytes'])} | {r['name']} | {r['pipelined_GBps']:.1f} | {r['roundtrip_us']:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not go:
        return

    torch_row = {r["bytes"]: r for r in rows if r["name"] == "torch copy_"}
    peer_row = {r["bytes"]: r for r in rows if r["name"] == "cudaMemcpyPeerAsync"}
    print(f"\ngocuda ({go['backend']} backend, device {go['from']} -> {go['to']}) beside torch copy_ in the same session; "
          "GB/s ratio: higher is better, round-trip ratio: lower is better")
    print("| size | gocuda path (route) | gocuda GB/s | torch GB/s | cudaMemcpyPeerAsync GB/s | GB/s gocuda/torch "
          "| gocuda round trip (us) | torch round trip (us) | round trip gocuda/torch |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for g in go["rows"]:
        t = torch_row.get(g["bytes"])
        if t is None:
            print(f"torch_peer: warning: {ibytes(g['bytes'])} was not timed here", file=sys.stderr)
            continue
        p = peer_row.get(g["bytes"])
        pgb = f"{p['pipelined_GBps']:.1f}" if p else "-"
        print(f"| {ibytes(g['bytes'])} | {g['path']} ({g['route']}) | {g['pipelined_GBps']:.1f} | {t['pipelined_GBps']:.1f} | {pgb} "
              f"| {g['pipelined_GBps'] / t['pipelined_GBps']:.2f} | {g['roundtrip_us']:.1f} | {t['roundtrip_us']:.1f} "
              f"| {g['roundtrip_us'] / t['roundtrip_us']:.2f} |")


if __name__ == "__main__":
    main()
