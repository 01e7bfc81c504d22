#!/usr/bin/env python3
"""examples/dataparallel's training in PyTorch DistributedDataParallel, to set
gocuda's data-parallel time per step beside.

The model, initialisation, synthetic data, loss and optimizer are
bench/pytorch_train.py's (imported from it: examples/train's MLP, nn.Linear's
init, inputs labelled by a random teacher, softmax cross-entropy, SGD with
momentum), and so are the sizes and flags. One process per GPU (spawned, as
torchrun would start them), NCCL backend, the model wrapped in
torch.nn.parallel.DistributedDataParallel with its defaults (25 MB buckets,
gradients averaged over the ranks while the backward pass runs). Every rank
makes the same global batches and trains on its shard of each, rows
rank*B/world to (rank+1)*B/world, as examples/dataparallel does. float32,
TF32 off, no AMP, no torch.compile.

Timing as pytorch_train.py and examples/dataparallel: the loss of each step is
summed on the GPU, all-reduced and read once an epoch (which synchronizes);
the first epoch is the warm-up and step_ms is the time per step over the
others, rank 0's clock. After the DDP run the script trains once more on one
GPU with the whole batch (no process group, no DDP), for the speed-up.

    python3 bench/torch_ddp.py                       # DDP on 2 GPUs, then 1 GPU
    python3 bench/torch_ddp.py --quick               # seconds
    python3 bench/torch_ddp.py --data dpdata \\
        --go-json dp_on.json --go-json dp_off.json   # the same numbers as gocuda's

--data DIR trains from what `dataparallel -save-data DIR` wrote (the initial
weights and every batch, raw little-endian files named by DIR/manifest.json;
the sizes come from the manifest) instead of drawing its own, so that its
losses and gocuda's agree to float tolerance. --go-json reads reports of
`dataparallel -json` and prints one markdown table of every run with the
ratios the issue asks about: gocuda's time per step over DDP's (at most 1)
and gocuda's speed-up over its own one-device run (at least 1.85); with
--data also the relative difference of the per-epoch losses.

NVLink multicast stays off (NCCL_NVLS_ENABLE=0 is set here if unset), as in
every gocuda run on these machines.
"""
import argparse
import json
import math
import os
import queue
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/ has no package

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import pytorch_train as pt

# Where the ranks run. Module globals, not flags: spawned ranks import this
# module afresh, and the GPU is the only place the figures mean anything.
DEVICE = "cuda"
BACKEND = "nccl"

DATA_FORMAT = "gocuda dataparallel data 1"  # examples/dataparallel's dataFormat
SIZE_FLAGS = ("epochs", "steps", "batch", "in_features", "width", "depth", "classes", "seed", "lr", "momentum")


def device(rank):
    return torch.device(DEVICE, rank) if DEVICE == "cuda" else torch.device(DEVICE)


def go_config(c):
    """A dataparallel JSON config in pytorch_train.py's names, less what is
    not the model's or the data's (overlap)."""
    names = {"in": "in_features", "steps_per_epoch": "steps"}
    return {names.get(k, k): v for k, v in c.items() if names.get(k, k) in pt.DEFAULT}


def read_manifest(path):
    try:
        with open(os.path.join(path, "manifest.json")) as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"--data {path}: {e} (dataparallel -save-data {path} writes it)")
    if man.get("format") != DATA_FORMAT:
        raise SystemExit(f"--data {path}: format {man.get('format')!r}, this script reads {DATA_FORMAT!r}")
    if man.get("byte_order") != "little" or sys.byteorder != "little":
        raise SystemExit(f"--data {path}: the files are {man.get('byte_order')}-endian and this machine {sys.byteorder}-endian")
    return man


def read_array(path, a):
    """One array of the manifest, as a CPU tensor of its shape and dtype."""
    dtype = {"float32": torch.float32, "int32": torch.int32}[a["dtype"]]
    name = os.path.join(path, a["file"])
    with open(name, "rb") as f:
        buf = bytearray(f.read())
    n = math.prod(a["shape"])
    if len(buf) != 4 * n:
        raise SystemExit(f"--data: {name} has {len(buf)} bytes; the manifest's shape {a['shape']} of {a['dtype']} needs {4 * n}")
    return torch.frombuffer(buf, dtype=dtype).reshape(a["shape"])


def load_weights(model, man, path):
    """Copies the manifest's layers into model (pytorch_train.make_model's
    Sequential: Linear, ReLU, ..., Linear). gocuda keeps W as in x out and
    computes x W + b; nn.Linear keeps weight as out x in and computes
    x weight^T + b: the weight goes in transposed."""
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    if len(linears) != len(man["layers"]):
        raise SystemExit(f"--data: {len(man['layers'])} layers in the manifest, {len(linears)} in the model")
    with torch.no_grad():
        for i, (lin, saved) in enumerate(zip(linears, man["layers"])):
            w, b = read_array(path, saved["weight"]), read_array(path, saved["bias"])
            if tuple(w.shape) != tuple(lin.weight.shape[::-1]) or tuple(b.shape) != tuple(lin.bias.shape):
                raise SystemExit(f"--data: layer {i} is {tuple(w.shape)} + {tuple(b.shape)}, the model's "
                                 f"{tuple(lin.weight.shape[::-1])} + {tuple(lin.bias.shape)}")
            lin.weight.copy_(w.t())
            lin.bias.copy_(b)


def rank_data(cfg, rank, world, path, man):
    """This rank's shard of every global batch: from --data's files, else
    drawn as pytorch_train.py draws them (the same on every rank)."""
    lo, hi = rank * cfg["batch"] // world, (rank + 1) * cfg["batch"] // world
    if path:
        out = []
        for saved in man["batches"]:
            x, labels = read_array(path, saved["x"]), read_array(path, saved["labels"])
            # int64: cross_entropy's class indices.
            out.append((x[lo:hi].to(device(rank)), labels[lo:hi].to(device(rank), torch.int64)))
        return out
    gen = torch.Generator(device=DEVICE).manual_seed(cfg["seed"])
    return [(x[lo:hi], labels[lo:hi]) for x, labels in pt.make_data(cfg, gen)]


def run(rank, world, cfg, opts, port, q):
    """One rank: world 1 is plain single-device training (no process group,
    no DDP)."""
    try:
        q.put((rank, train(rank, world, cfg, opts, port)))
    except BaseException as e:  # the parent must not wait for a rank that died
        q.put((rank, f"{type(e).__name__}: {e}"))
        raise


def train(rank, world, cfg, opts, port):
    if DEVICE == "cuda":
        torch.cuda.set_device(rank)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if world > 1:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        extra = {"device_id": device(rank)} if DEVICE == "cuda" else {}
        dist.init_process_group(BACKEND, rank=rank, world_size=world, **extra)
    try:
        man = read_manifest(opts["data"]) if opts["data"] else None
        # pytorch_train.py's order: the seed, the data (its own generator),
        # then the model (the default generator): without --data, world 1
        # is pytorch_train.py's run.
        torch.manual_seed(cfg["seed"])
        data = rank_data(cfg, rank, world, opts["data"], man)
        model = pt.make_model(cfg)
        if man:
            load_weights(model, man, opts["data"])
        net = model
        if world > 1:
            net = DistributedDataParallel(model, device_ids=[rank] if DEVICE == "cuda" else None,
                                          bucket_cap_mb=opts["bucket_cap_mb"],
                                          gradient_as_bucket_view=opts["bucket_view"])
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])
        sync()
        if world > 1:
            dist.barrier()
        if DEVICE == "cuda":
            torch.cuda.reset_peak_memory_stats()

        epochs = []
        start = time.perf_counter()
        first = 0.0
        for e in range(cfg["epochs"]):
            t0 = time.perf_counter()
            total = torch.zeros((), device=device(rank))
            for x, labels in data:
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(net(x), labels)
                loss.backward()
                opt.step()
                total += loss.detach()
            if world > 1:
                dist.all_reduce(total)  # the ranks' shard means: their mean is the global batch's
            mean = total.item() / (cfg["steps"] * world)  # synchronizes
            d = time.perf_counter() - t0
            if e == 0:
                first = d
            epochs.append(dict(epoch=e + 1, seconds=d, loss=mean))
            if rank == 0:
                print(f"{world} GPU(s), epoch {e + 1}: {d:7.3f}s  {1e3 * d / cfg['steps']:7.2f} ms/step  loss {mean:.6f}", file=sys.stderr)
        train_s = time.perf_counter() - start
        steady, steps = train_s, cfg["epochs"] * cfg["steps"]
        if cfg["epochs"] > 1:
            steady, steps = train_s - first, (cfg["epochs"] - 1) * cfg["steps"]
        rep = dict(backend="pytorch " + torch.__version__, world_size=world, ddp=world > 1,
                   bucket_cap_mb=opts["bucket_cap_mb"], gradient_as_bucket_view=opts["bucket_view"],
                   data=opts["data"] or "drawn by torch", nccl_env=nccl_env(), config=cfg, epochs=epochs,
                   train_seconds=train_s, step_ms=1e3 * steady / steps)
        if DEVICE == "cuda":
            rep.update(device=torch.cuda.get_device_name(rank),
                       nccl=".".join(map(str, torch.cuda.nccl.version())),
                       peak_reserved_bytes=torch.cuda.max_memory_reserved(),
                       peak_live_bytes=torch.cuda.max_memory_allocated())
        return rep
    finally:
        if world > 1:
            dist.destroy_process_group()


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def spawn(world, cfg, opts, port):
    """Runs world ranks, a process each, and returns rank 0's report. A rank
    that fails ends the others: they would wait for it in NCCL."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, world, cfg, opts, port, q)) for r in range(world)]
    for p in procs:
        p.start()
    reports, failed = {}, None
    while len(reports) < world and failed is None:
        try:
            r, rep = q.get(timeout=1)
        except queue.Empty:
            dead = [i for i, p in enumerate(procs) if p.exitcode not in (None, 0)]
            if dead:
                failed = f"rank {dead[0]} exited with status {procs[dead[0]].exitcode}"
            continue
        if isinstance(rep, str):
            failed = f"rank {r}: {rep}"
        reports[r] = rep
    if failed:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
        raise SystemExit(f"torch_ddp: {world} GPU(s): {failed}")
    for p in procs:
        p.join()
    return reports[0]


def step_ms(epochs, steps):
    """dataparallel's stepMs: the time per step after the first epoch."""
    rest = epochs[1:] if len(epochs) > 1 else epochs
    return 1e3 * sum(e["seconds"] for e in rest) / (steps * len(rest))


def rel_diff(a, b):
    """The largest relative difference of two runs' per-epoch losses (b's as
    the reference)."""
    return max(abs(x["loss"] - y["loss"]) / abs(y["loss"]) for x, y in zip(a, b))


def go_name(path, g):
    mode = {"goroutines": "goroutines", "launcher": "launched", "single": "one process"}.get(g["launch"]["mode"], g["launch"]["mode"])
    ov = g["config"].get("overlap")
    # The file's name too: it is where a run's NCCL environment is told.
    return (f"gocuda, {g['launch']['world_size']} rank(s) ({mode}), overlap {'-' if ov is None else 'on' if ov else 'off'}"
            f" ({os.path.basename(path)})")


def nccl_env():
    """The NCCL settings that change how much of the GPU a collective takes,
    where set (NCCL_NVLS_ENABLE=0 is every run's)."""
    return {k: v for k, v in os.environ.items() if k in ("NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_CTAS", "NCCL_MIN_CTAS", "NCCL_PROTO", "NCCL_ALGO")}


def table(ddp, single, gos, same_data):
    """The markdown table of the runs and the ratios the issue asks about."""
    rows = ["| run | GPUs | ms/step | speed-up over 1 GPU | final loss |", "|---|---|---|---|---|"]
    speed = single["step_ms"] / ddp["step_ms"]
    env = "".join(f", {k}={v}" for k, v in sorted(ddp.get("nccl_env", {}).items()))
    rows.append(f"| PyTorch DDP{env} | {ddp['world_size']} | {ddp['step_ms']:.2f} | {speed:.3f} | {ddp['epochs'][-1]['loss']:.6f} |")
    rows.append(f"| PyTorch | 1 | {single['step_ms']:.2f} | 1 | {single['epochs'][-1]['loss']:.6f} |")
    notes = []
    for path, g in gos:
        name, world = go_name(path, g), g["launch"]["world_size"]
        one = step_ms(g["single_device"], g["config"]["steps_per_epoch"]) if g.get("single_device") else None
        sp = f"{one / g['step_ms']:.3f}" if one else "-"
        rows.append(f"| {name} | {world} | {g['step_ms']:.2f} | {sp} | {g['epochs'][-1]['loss']:.6f} |")
        if one:
            rows.append(f"| gocuda, 1 device (beside the row above) | 1 | {one:.2f} | 1 | {g['single_device'][-1]['loss']:.6f} |")
        if world == ddp["world_size"]:
            notes.append(f"{name}: ms/step / DDP's {g['step_ms'] / ddp['step_ms']:.3f} (the issue asks <= 1)"
                         + (f", speed-up over its 1 device {one / g['step_ms']:.3f} (the issue asks >= 1.85)" if one else
                            " (no single_device in the report: run dataparallel with -compare for the speed-up)"))
        if "loss_relative_difference" in g or g.get("single_device"):
            notes.append(f"{name}: losses against its own 1-device run, largest relative difference {g.get('loss_relative_difference', 0):.2g}")
        if same_data:
            notes.append(f"{name}: per-epoch losses against DDP's, largest relative difference {rel_diff(g['epochs'], ddp['epochs']):.2g}"
                         + (f"; its 1 device against PyTorch's 1 GPU {rel_diff(g['single_device'], single['epochs']):.2g}" if g.get("single_device") else ""))
        notes.append(f"  ({path}: {g.get('device', '?')}, {g.get('backend', '?')})")
    if not same_data and gos:
        notes.append("the losses come from different draws (torch's generator and Go's): give --data, from dataparallel -save-data, to compare them")
    return "\n".join(rows) + ("\n\n" + "\n".join(notes) if notes else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="examples/dataparallel's -quick sizes")
    for k in SIZE_FLAGS:
        ap.add_argument("--" + k.replace("_features", ""), dest=k, type=float if k in ("lr", "momentum") else int)
    ap.add_argument("--ranks", type=int, default=2, help="GPUs for DDP, a process each (default 2)")
    ap.add_argument("--no-single", action="store_true", help="skip the one-GPU run")
    ap.add_argument("--data", metavar="DIR", help="train from what `dataparallel -save-data DIR` wrote")
    ap.add_argument("--bucket-cap-mb", type=float, default=25, help="DDP's bucket_cap_mb (its default, 25)")
    ap.add_argument("--bucket-view", action="store_true", help="DDP's gradient_as_bucket_view=True (default False, DDP's)")
    ap.add_argument("--port", type=int, default=29513)
    ap.add_argument("--json", action="store_true", help="print the reports as JSON on stdout")
    ap.add_argument("--go-json", action="append", default=[], metavar="FILE",
                    help="a report of `dataparallel -json` to put in the table (repeatable)")
    args = ap.parse_args()

    cfg = dict(pt.QUICK if args.quick else pt.DEFAULT)
    given = {k: getattr(args, k) for k in SIZE_FLAGS if getattr(args, k) is not None}
    if args.data:
        cfg = go_config(read_manifest(args.data)["config"])
        clash = {k: v for k, v in given.items() if v != cfg[k]}
        if clash or args.quick:
            raise SystemExit(f"--data {args.data} sets the sizes from its manifest ({cfg}); leave out {clash or '--quick'}")
    cfg.update(given)
    if DEVICE == "cuda" and torch.cuda.device_count() < args.ranks:
        raise SystemExit(f"torch_ddp: {args.ranks} ranks need {args.ranks} GPUs, found {torch.cuda.device_count()}")
    if args.ranks < 2:
        raise SystemExit("torch_ddp: --ranks is at least 2 (the one-GPU run comes after it by itself)")
    if cfg["batch"] % args.ranks:
        raise SystemExit(f"torch_ddp: the global batch of {cfg['batch']} does not split evenly among {args.ranks} ranks")
    opts = dict(data=args.data, bucket_cap_mb=args.bucket_cap_mb, bucket_view=args.bucket_view)

    ddp = spawn(args.ranks, cfg, opts, args.port)
    single = None if args.no_single else spawn(1, cfg, opts, args.port)
    out = sys.stderr if args.json else sys.stdout
    if args.json:
        json.dump(dict(ddp=ddp, single=single), sys.stdout, indent=2)
        print()
    for r in (ddp, single):
        if r:
            print(f"{r.get('device', DEVICE)}, {r['backend']}, {r['world_size']} GPU(s){' DDP' if r['ddp'] else ''}: "
                  f"{r['step_ms']:.2f} ms/step after the first epoch, final loss {r['epochs'][-1]['loss']:.6f}", file=out)
    if args.go_json:
        if single is None:
            raise SystemExit("torch_ddp: --go-json's table needs the one-GPU run: leave out --no-single")
        gos = []
        for path in args.go_json:
            with open(path) as f:
                g = json.load(f)
            if go_config(g["config"]) != cfg:
                print(f"warning: {path} ran {go_config(g['config'])}, this run {cfg}", file=sys.stderr)
            gos.append((path, g))
        print(table(ddp, single, gos, bool(args.data)), file=out)


if __name__ == "__main__":
    main()
