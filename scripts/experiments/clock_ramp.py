"""How fast single launches get after the GPU sat idle, launch by launch (GPU, no clock control).

Usage: python3 scripts/experiments/clock_ramp.py OUT.json

l2_boundary.py timed the 64 MB points at 98-100 % of memcpy when each entry ran straight after
the previous one, where the bench sweep had them at 30-75 % (single launches of 40-60 us against
19): the sweep's checks and host work between entries leave the GPU idle. Here, at float16
4096x4096 and float32 8192x8192: after idling 0 to 1 s, 200 back-to-back event-timed launches of
memcpy, a 16-byte copy kernel and vec_tuned (medians of launches 0-4, 5-19, 20-49, 50-199); then
after 200 ms idle, the bench's 5 warm-up launches or a warm-up of W ms before 30 timed ones.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from timed import copy_and_tuned  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import import_cupy
from profiler_report.model.registry import get_case

POINTS = (("float16", 4096, 4096), ("float32", 8192, 8192))


def launches(cupy, fn, pairs, n) -> list[float]:
    ev = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(n)]
    for i, (s, e) in enumerate(ev):
        s.record()
        fn(*pairs[i % len(pairs)])
        e.record()
    ev[-1][1].synchronize()
    return [cupy.cuda.get_elapsed_time(s, e) * 1e3 for s, e in ev]


def warm_for(cupy, fn, pairs, seconds) -> int:
    n, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(4):
            fn(*pairs[n % len(pairs)])
            n += 1
        cupy.cuda.runtime.deviceSynchronize()
    return n


def main() -> None:
    out = sys.argv[1]
    cupy = import_cupy()
    case = get_case("transpose")
    res = []
    for dtype, r, c in POINTS:
        pairs, fns = copy_and_tuned(cupy, case, dtype, r, c)
        for name in list(fns)[1:]:
            assert not bench.check_output(cupy, name, fns[name], pairs, copy=name.startswith("copy"))
        bench.warm_sm_clocks(cupy, pairs, 1.0)
        for name, fn in fns.items():
            for idle in (0.0, 0.05, 0.2, 1.0):
                time.sleep(idle)
                us = launches(cupy, fn, pairs, 200)
                parts = [statistics.median(us[a:b]) for a, b in ((0, 5), (5, 20), (20, 50), (50, 200))]
                res.append(dict(dtype=dtype, rows=r, cols=c, name=name, idle_s=idle, medians=parts, first=us[:40]))
                print(f"{dtype} {r}x{c} {name:<14} idle {idle:4.2f} s: medians of launches 0-4 / 5-19 / 20-49 / "
                      f"50-199: {' / '.join(f'{x:.1f}' for x in parts)} us; first 12: "
                      f"{' '.join(f'{x:.0f}' for x in us[:12])}", flush=True)
            for warm in ("5 launches", 0.002, 0.01, 0.03, 0.1):
                time.sleep(0.2)
                if warm == "5 launches":
                    for i in range(5):
                        fn(*pairs[i % 3])
                    cupy.cuda.runtime.deviceSynchronize()
                    n = 5
                else:
                    n = warm_for(cupy, fn, pairs, warm)
                us = launches(cupy, fn, pairs, 30)
                med = statistics.median(us)
                q = statistics.quantiles(us, n=10)
                res.append(dict(dtype=dtype, rows=r, cols=c, name=name, warmup=str(warm), warm_launches=n,
                                median_us=med, p10_us=q[0], p90_us=q[-1]))
                print(f"{dtype} {r}x{c} {name:<14} after 0.2 s idle, warm-up {warm} ({n} launches): median "
                      f"{med:.1f} us, p10-p90 {q[0]:.1f}-{q[-1]:.1f}", flush=True)
        json.dump(res, open(out, "w"))


if __name__ == "__main__":
    main()
