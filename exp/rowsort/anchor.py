# torch.sort(x, 1) (values and indices) on random float32 rows, timed as
# bench.cu times its kernels: cuda events, 5 warm-up runs, median of 30.
import torch

for rows, n in ((4096, 4096), (16384, 1024), (1024, 16384)):
    x = torch.randn(rows, n, device="cuda", dtype=torch.float32)
    for _ in range(5):
        torch.sort(x, 1)
    ts = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.sort(x, 1)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    ts.sort()
    us = ts[len(ts) // 2]
    print(f"  torch.sort(x, 1) {rows}x{n}: {us:8.1f} us {rows * n * 16 / (us * 1e3):7.1f} GB/s (anchor)")
