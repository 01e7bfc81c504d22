import torch
def t(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    res = []
    for _ in range(9):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20): f()
        e.record(); torch.cuda.synchronize(); res.append(s.elapsed_time(e) * 1000 / 20)
    return sorted(res)[4]
for r, c in [(4096, 4096), (65536, 1024)]:
    x = torch.randn(r, c, device='cuda')
    ones = torch.ones(r, device='cuda')
    tc = t(lambda: x.clone()); cp = 2 * x.numel() * 4 / tc / 1e3
    ts = t(lambda: x.sum(0)); tg = t(lambda: ones @ x)
    b = x.numel() * 4 + c * 4
    print(f"torch {r}x{c}: clone {tc:.1f} us {cp:.0f} GB/s; sum(0) {ts:.1f} us {b/ts/1e3/cp:.3f} of clone; ones@x (gemv) {tg:.1f} us {b/tg/1e3/cp:.3f}")
