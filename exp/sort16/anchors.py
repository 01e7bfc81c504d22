# The anchors of exp/sort16's bench: CuPy's and torch's sort of 16 Mi
# float32 (standard normal, as ../shared/anchors/arrays.py), median of 25
# after 3 warm-ups, each run timed with CUDA events.
import statistics

n = 1 << 24


def med_us(fn, sync, ev):
    for _ in range(3):
        fn()
    sync()
    ts = []
    for _ in range(25):
        a, b = ev(), ev()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def line(name, us):
    print(f"{name:34s} {us:8.1f} us {n * 4 / us / 1e3:6.1f} GB/s")


try:
    import torch

    v = torch.randn(n, device="cuda")
    ev = lambda: torch.cuda.Event(enable_timing=True)
    line("torch.sort f32 (values+indices)", med_us(lambda: torch.sort(v), torch.cuda.synchronize, ev))
    line("torch.argsort f32", med_us(lambda: torch.argsort(v), torch.cuda.synchronize, ev))
except Exception as ex:
    print("torch:", ex)
try:
    import cupy as cp

    cv = cp.random.standard_normal(n, dtype=cp.float32)

    def cmed(fn):
        for _ in range(3):
            fn()
        cp.cuda.Device().synchronize()
        ts = []
        for _ in range(25):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
        return statistics.median(ts)

    line("cupy.sort f32 (anchor)", cmed(lambda: cp.sort(cv)))
    line("cupy.argsort f32", cmed(lambda: cp.argsort(cv)))
except Exception as ex:
    print("cupy:", ex)
