"""Where torch.compile leads at L2-resident sizes: our kernels with one output buffer shared by every
call (as a peer that allocates its output gets from its pool) against the bench's own buffer pairs (GPU).

Usage: python3 scripts/experiments/l2_output_reuse.py OUT.json

At the three L2-resident points where the committed sweep has torch.compile ahead beyond the spread,
one more L2 point and a DRAM one: memcpy, the 16-byte copy kernel and vec_tuned, each checked bit for
bit, then held-event-timed (50 repeats) with the bench's three (input, output) pairs ("rotated") and
with the three inputs writing one output ("shared out"); the peers (which ignore the output given
them and allocate their own) as the bench times them.
"""

from __future__ import annotations

import json
import statistics
import sys

from timed import copy_and_tuned  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import event_times_us, import_cupy
from profiler_report.model.registry import get_case

POINTS = (("float32", 2048, 2048), ("float64", 1024, 1024), ("float64", 1000, 3000), ("float32", 1024, 1024),
          ("float32", 8192, 8192))
PEERS = ("torch.compile t().contiguous()", "triton transpose", "cupy.cublas.geam")


def main() -> None:
    out = sys.argv[1]
    cupy = import_cupy()
    case = get_case("transpose")
    copy16 = bench.COPIES[2]
    res = []
    for dtype, r, c in POINTS:
        pairs, fns = copy_and_tuned(cupy, case, dtype, r, c)  # an output per pair: "rotated"
        shared = [(src, pairs[0][1]) for src, _ in pairs]
        peers = bench.peers(cupy, dtype)
        fns.update({p: peers[p][0] for p in PEERS if peers.get(p, (None, ""))[0] is not None})
        bench.warm_sm_clocks(cupy, pairs)
        nbytes = 2 * r * c * cupy.dtype(dtype).itemsize
        for name, fn in fns.items():
            bad = bench.check_output(cupy, name, fn, pairs, copy=name in ("memcpy", copy16.id))
            if bad:
                print(f"{dtype} {r}x{c} {name}: WRONG {bad}", flush=True)
                continue
            for how, ps in (("rotated", pairs), ("shared out", shared)):
                if how == "shared out" and name in PEERS:
                    continue
                us = event_times_us(fn, ps, 50, 5)
                q = statistics.quantiles(us, n=10)
                row = dict(dtype=dtype, rows=r, cols=c, name=name, buffers=how, median_us=statistics.median(us),
                           p10_us=q[0], p90_us=q[-1], gbps=nbytes / (statistics.median(us) * 1e3))
                res.append(row)
                print(f"{dtype} {r}x{c} {name:<32} {how:<10} {row['median_us']:8.2f} us "
                      f"({row['p10_us']:.2f}-{row['p90_us']:.2f}) {row['gbps']:6.0f} GB/s", flush=True)
        json.dump(res, open(out, "w"))


if __name__ == "__main__":
    main()
