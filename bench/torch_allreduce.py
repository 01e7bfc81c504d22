#!/usr/bin/env python3
"""All-reduce bandwidth of torch.distributed with the NCCL backend, for the
table beside gocuda's nccl benchmark (BenchmarkAllReduce in package nccl).

One process per GPU, as torchrun would start them; with --ranks 1 a single
process on cuda:0 (what issue 17 measures on one H100). For each size it
times --iters all-reduces (sum, float32, in place) after --warmup, with CUDA
events around the whole loop, and prints the same columns as nccl-tests:
algorithm bandwidth (bytes / time) and bus bandwidth (algbw * 2(n-1)/n, 0 for
one rank, where NCCL copies nothing between GPUs).

    NCCL_NVLS_ENABLE=0 python3 bench/torch_allreduce.py --ranks 1
    NCCL_NVLS_ENABLE=0 python3 bench/torch_allreduce.py --ranks 2 --json out.json

Beside gocuda, in one run: `gocuda bench allreduce --json F` (one process
driving both GPUs) and `gocuda launch -n 2 -- gocuda bench allreduce --json G`
(a process per GPU) first, then

    python3 bench/torch_allreduce.py --ranks 2 --go-json F --go-json G

prints one table: torch's time and bus bandwidth at each size, and each
gocuda run's (registered and not) with its ratio to torch's: bus bandwidth
over torch's (at least 1 is as fast), time over torch's for the 1 KiB row
(at most 1 is as fast).

NVLink multicast stays off (NCCL_NVLS_ENABLE=0 is set here if unset), as in
every gocuda run on these machines.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28]  # bytes


def run(rank, world, args, port, q):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    rows = []
    for size in SIZES:
        x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(args.warmup):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            dist.all_reduce(x)
        end.record()
        end.synchronize()
        t = start.elapsed_time(end) / 1e3 / args.iters
        algbw = size / t / 1e9
        rows.append({"bytes": size, "seconds": t, "algbw_GBps": algbw,
                     "busbw_GBps": algbw * 2 * (world - 1) / world})
    dist.destroy_process_group()
    if rank == 0:
        q.put(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--port", type=int, default=29512)
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--go-json", action="append", default=[], metavar="FILE",
                    help="a report of `gocuda bench allreduce --json`, set beside torch's rows (repeatable)")
    args = ap.parse_args()
    if torch.cuda.device_count() < args.ranks:
        sys.exit(f"torch_allreduce: {args.ranks} ranks need {args.ranks} GPUs, found {torch.cuda.device_count()}")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, args.ranks, args, args.port, q)) for r in range(args.ranks)]
    for p in procs:
        p.start()
    rows = q.get()
    for p in procs:
        p.join()
    print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
          f"{args.ranks} rank(s) on {torch.cuda.get_device_name(0)}")
    print("| bytes | time (us) | algbw (GB/s) | busbw (GB/s) |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['bytes']} | {r['seconds'] * 1e6:.1f} | {r['algbw_GBps']:.1f} | {r['busbw_GBps']:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.go_json:
        beside(rows, args.go_json)


def beside(rows, files):
    """One table of torch's rows and each gocuda report's, with ratios."""
    runs = []
    for name in files:
        with open(name) as f:
            rep = json.load(f)
        for reg in (False, True):
            got = {r["bytes"]: r for r in rep["rows"] if r["registered"] == reg}
            if got:
                runs.append((f"gocuda, {rep['mode']}, {'registered' if reg else 'unregistered'}", got))
    print()
    print("| bytes | torch time (us) | torch busbw (GB/s) | " +
          " | ".join(f"{n}: time (us) / busbw (GB/s) / vs torch" for n, _ in runs) + " |")
    print("|---:|---:|---:|" + "---:|" * len(runs))
    for r in rows:
        cells = []
        for _, got in runs:
            g = got.get(r["bytes"])
            if g is None:
                cells.append("-")
                continue
            # Bus bandwidth over torch's; for the smallest size, where time
            # is latency, torch's time over ours (both: above 1 is faster).
            if r["bytes"] <= 4096:
                ratio = f"{r['seconds'] / g['seconds']:.2f}x faster" if g["seconds"] <= r["seconds"] else f"{g['seconds'] / r['seconds']:.2f}x slower"
            else:
                ratio = f"{g['busbw_GBps'] / r['busbw_GBps']:.3f}" if r["busbw_GBps"] else "-"
            cells.append(f"{g['seconds'] * 1e6:.1f} / {g['busbw_GBps']:.1f} / {ratio}")
        print(f"| {r['bytes']} | {r['seconds'] * 1e6:.1f} | {r['busbw_GBps']:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
