"""Event timing with and without the stream held while the host queues the launches (GPU).

Usage: python3 scripts/experiments/held_timing.py OUT.json

At two L2-resident sizes, a 64 MB point and a DRAM one: memcpy, the 16-byte copy kernel, vec_tuned,
cuBLAS geam and the Triton peer (float32; the Triton row where torch and triton import), each checked
bit for bit, then 30 launches timed the way the bench did before (start event, call, end event, on
an idle GPU) and the way live/gpu.event_times_us does now (the same, queued behind a QueueHold),
each after 0.2 s of host idling (as between a sweep's entries). Prints the medians and p10-p90.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from timed import copy_and_tuned  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import event_times_us, import_cupy
from profiler_report.model.registry import get_case

POINTS = (("float32", 1024, 1024), ("float32", 2048, 2048), ("float16", 4096, 4096), ("float32", 8192, 8192))


def unheld(cupy, fn, pairs, repeats=30, warmup=5) -> list[float]:
    for i in range(warmup):
        fn(*pairs[i % len(pairs)])
    cupy.cuda.runtime.deviceSynchronize()
    ev = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(repeats)]
    for i, (s, e) in enumerate(ev):
        s.record()
        fn(*pairs[i % len(pairs)])
        e.record()
    ev[-1][1].synchronize()
    return sorted(cupy.cuda.get_elapsed_time(s, e) * 1e3 for s, e in ev)


def main() -> None:
    out = sys.argv[1]
    cupy = import_cupy()
    case = get_case("transpose")
    copy16 = bench.COPIES[2]
    res = []
    for dtype, r, c in POINTS:
        pairs, fns = copy_and_tuned(cupy, case, dtype, r, c)
        peers = bench.peers(cupy, dtype)
        for name in ("cupy.cublas.geam", "triton transpose"):
            if peers.get(name, (None, ""))[0] is not None:
                fns[name] = peers[name][0]
        bench.warm_sm_clocks(cupy, pairs)
        nbytes = 2 * r * c * cupy.dtype(dtype).itemsize
        for name, fn in fns.items():
            bad = bench.check_output(cupy, name, fn, pairs, copy=name in ("memcpy", copy16.id))
            if bad:
                print(f"{dtype} {r}x{c} {name}: WRONG {bad}", flush=True)
                continue
            row = dict(dtype=dtype, rows=r, cols=c, name=name)
            for how in ("unheld", "held"):
                time.sleep(0.2)
                us = unheld(cupy, fn, pairs) if how == "unheld" else event_times_us(fn, pairs, 30, 5)
                q = statistics.quantiles(us, n=10)
                row[how] = dict(median_us=statistics.median(us), p10_us=q[0], p90_us=q[-1],
                                gbps=nbytes / (statistics.median(us) * 1e3))
            res.append(row)
            u, h = row["unheld"], row["held"]
            print(f"{dtype} {r}x{c} {name:<20} unheld {u['median_us']:8.1f} us ({u['p10_us']:.1f}-{u['p90_us']:.1f})"
                  f"   held {h['median_us']:8.1f} us ({h['p10_us']:.1f}-{h['p90_us']:.1f}, {h['gbps']:.0f} GB/s)",
                  flush=True)
        json.dump(res, open(out, "w"))


if __name__ == "__main__":
    main()
