#!/usr/bin/env bash
# exp/cubsort/run.sh (issue 30): CUB's onesweep agents in our own extern "C"
# kernels, driven by our own launch sequence, vs cub::DeviceRadixSort and
# cupy.sort/argsort on 16 Mi float32. Run from the repository root on the
# GPU machine: bash exp/cubsort/run.sh
set -u
cd "$(dirname "$0")/../.."
B=$(mktemp /tmp/cubsort.XXXXXX)
LOG=$B.log
trap 'rm -f "$B" "$B.log" "$B.host"' EXIT
echo "nvcc: $(nvcc --version | tail -1)"
# The optimizer in parallel where this nvcc has -split-compile.
SPLIT=""
nvcc --help 2>/dev/null | grep -q -- '-split-compile' && SPLIT="-split-compile=0"
t0=$(date +%s)
if nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda $SPLIT -o "$B" exp/cubsort/bench.cu >"$LOG" 2>&1; then
  echo "compiled in $(( $(date +%s) - t0 )) s"
  timeout 120 "$B" 2>&1 | head -n 48
  rc=${PIPESTATUS[0]}
  [ "$rc" -ne 0 ] && echo "bench exited with status $rc"
else
  echo "COMPILE FAILED ($(( $(date +%s) - t0 )) s): the wrappers around cub::detail::radix_sort::AgentRadixSortOnesweep /"
  echo "AgentRadixSortHistogram did not compile against this toolkit's CUB; first errors:"
  grep -m 12 -E 'error' "$LOG" | cut -c1-230
  echo "FALLBACK: host API only (-DCUBSORT_HOST_ONLY), with CUB_DEBUG_LOG's launch lines (first call of each):"
  echo "(timed with CUB_DEBUG_LOG on: the host prints between launches may add gaps)"
  if nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda $SPLIT -DCUBSORT_HOST_ONLY -DCUB_DEBUG_LOG -o "$B.host" exp/cubsort/bench.cu >"$LOG" 2>&1; then
    timeout 120 "$B.host" 2>&1 | awk '/Invoking/ { if (c++ < 14) print; next } { print }' | head -n 30
  else
    echo "host-only build failed too:"; grep -m 8 -E 'error' "$LOG" | cut -c1-230
  fi
fi
python3 - <<'PY'
# The anchors, timed like the bench: 3 warm-ups, median of 31, CUDA events on the current stream.
n = 1 << 24
def med(f, ev, sync):
    for _ in range(3):
        f()
    sync()
    ts = []
    for _ in range(31):
        a, b = ev(), ev()
        a.record(); f(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1000.0)  # ms -> us
    ts.sort()
    return ts[len(ts) // 2]
try:
    import cupy as cp
    class CpEv:  # cupy's Event with torch's elapsed_time
        def __init__(self): self.e = cp.cuda.Event()
        def record(self): self.e.record()
        def synchronize(self): self.e.synchronize()
        def elapsed_time(self, o): return cp.cuda.get_elapsed_time(self.e, o.e)
    x = cp.random.standard_normal(n, dtype=cp.float32)
    for name, f in (("cupy.sort", lambda: cp.sort(x)), ("cupy.argsort", lambda: cp.argsort(x))):
        t = med(f, CpEv, cp.cuda.Device().synchronize)
        print("%-32s %7.1f %7.1f  (anchor, same run; CuPy %s)" % (name, t, n * 4 / 1e3 / t, cp.__version__))
except Exception as e:
    print("cupy anchor failed:", repr(e)[:200])
try:
    import torch
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    ev = lambda: torch.cuda.Event(enable_timing=True)
    for name, f in (("torch.sort", lambda: torch.sort(x)), ("torch.argsort(stable)", lambda: torch.argsort(x, stable=True))):
        t = med(f, ev, torch.cuda.synchronize)
        print("%-32s %7.1f %7.1f  (torch %s)" % (name, t, n * 4 / 1e3 / t, torch.__version__))
except Exception as e:
    print("torch anchor failed:", repr(e)[:200])
PY
