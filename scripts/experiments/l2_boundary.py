"""The 64 MB sweep points (in + out just past the L2) under four L2 states (GPU).

Usage: python3 scripts/experiments/l2_boundary.py OUT.json

At float16 4096x4096, 8192x2048 and float64 2048x2048 (32 MiB a matrix; the H200's L2 is 60 MiB)
the bench sweep timed memcpy, the copy kernels and the stages bimodally (single launches 19 us or
40-60 us). Here memcpy, the copy kernels, vec_tuned and two vec_realigned tiles are each checked bit
for bit, then event-timed (100 launches) four ways: as the bench does (3 buffer pairs in turn,
back to back), 8 pairs in turn, one pair over and over (both in L2 as far as they fit), and with
the L2 flushed (a 256 MB memset) before every launch. Controls: float32 4096x2048 (the same bytes),
4096x4096 and 8192x8192 (2x and 8x the L2). Printed per entry: median, p10-p90, min, the share of
launches slower than 1.5x the fastest, GB/s and % of memcpy in the same L2 state.
"""

from __future__ import annotations

import json
import statistics
import sys

from realigned import realigned  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import import_cupy, memcpy_fn
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.registry import get_case
from profiler_report.util.dtypes import ITEMSIZE

POINTS = {"float16": ((4096, 4096), (8192, 2048)), "float64": ((2048, 2048),),
          "float32": ((4096, 2048), (4096, 4096), (8192, 8192))}
REPEATS = 100


def timed(cupy, fn, pairs, flush=None) -> list[float]:
    for i in range(5):
        fn(*pairs[i % len(pairs)])
    cupy.cuda.runtime.deviceSynchronize()
    ev = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(REPEATS)]
    for i, (s, e) in enumerate(ev):
        if flush is not None:
            flush.data.memset_async(i & 0xFF, flush.nbytes)
        s.record()
        fn(*pairs[i % len(pairs)])
        e.record()
    ev[-1][1].synchronize()
    return [cupy.cuda.get_elapsed_time(s, e) * 1e3 for s, e in ev]


def main() -> None:
    out = sys.argv[1]
    cupy = import_cupy()
    case = get_case("transpose")
    tuned = next(s for s in case.manifest.stages if s.launch == "vec_tuned")
    flush = cupy.empty(256 << 20, dtype=cupy.uint8)
    rows = []
    for dtype, shapes in POINTS.items():
        stages = [*bench.COPIES, tuned, realigned(32, 32, 512), realigned(16, 8, 256)]
        module, names = compile_module(case, dtype, extra=tuple(stages))
        k = Kernels(module, names, dtype, case)
        for r, c in shapes:
            nbytes = 2 * r * c * ITEMSIZE[dtype]
            many = bench.make_pairs(case, cupy, r, c, dtype, 8, shared_output=False)  # as recorded
            bench.warm_sm_clocks(cupy, many, 1.0)
            fns = {"memcpy": memcpy_fn(cupy)}
            size = {"rows": r, "cols": c}
            for st in stages:
                def fn(src, dst, st=st, k=k, size=size):
                    k.launch(st, src, dst, size)
                bad = bench.check_output(cupy, st.id, fn, many[:1], copy=st.op == "copy")
                fns[st.id] = None if bad else fn
                if bad:
                    print(f"{r}x{c} {dtype} {st.id}: WRONG {bad}", flush=True)
            states = {"bench (3 pairs)": (many[:3], None), "8 pairs": (many, None),
                      "1 pair": (many[:1], None), "L2 flushed": (many[:3], flush)}
            print(f"{r}x{c} {dtype} ({nbytes / 2**20:.0f} MiB in + out)", flush=True)
            for state, (pairs, fl) in states.items():
                base = None
                for name, fn in fns.items():
                    if fn is None:
                        continue
                    us = timed(cupy, fn, pairs, fl)
                    srt = sorted(us)
                    med, q = statistics.median(us), statistics.quantiles(us, n=10)
                    gbps = nbytes / (med * 1e3)
                    base = base or gbps
                    slow = sum(x > 1.5 * srt[0] for x in us) / len(us)
                    rows.append(dict(rows=r, cols=c, dtype=dtype, state=state, name=name, median_us=med,
                                     p10_us=q[0], p90_us=q[-1], min_us=srt[0], slow_share=slow, gbps=gbps,
                                     pct_of_memcpy=100 * gbps / base, first_us=us[:24]))
                    print(f"  {state:<16} {name:<28} {med:8.1f} us  {q[0]:7.1f}-{q[-1]:7.1f}  min {srt[0]:7.1f}"
                          f"  slow {100 * slow:4.0f}%  {gbps:6.0f} GB/s {100 * gbps / base:6.1f}%", flush=True)
            json.dump(rows, open(out, "w"))
            del many


if __name__ == "__main__":
    main()
