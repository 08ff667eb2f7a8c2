"""vec_realigned's tile order at the largest shapes, with one and two tiles per block, and two
register/unroll variants for float16 at the odd shapes (GPU).

Usage: python3 scripts/experiments/realigned_order.py OUT.json
REALIGNED_ORDER=G (an NVRTC macro) walks G tile columns at a time, across them first, then down
(0: the kernel's own order, down one tile column). Every variant is checked bit for bit at a few
odd and edge shapes before it is timed.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

ORDERS = (0, 2, 8, 32)
LARGE = {"float64": ((16384, 16384), (8192, 16384)), "float32": ((16384, 16384),), "float16": ((16384, 16384),)}
LARGE_CFG = {"float64": ((32, 16, 512, 2), (32, 32, 512, 2), (32, 32, 512, 1)),
             "float32": ((32, 16, 512, 1), (32, 16, 512, 2)),
             "float16": ((16, 16, 512, 2), (32, 16, 512, 1))}
ODD = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907))
F16 = ((("-DREALIGNED_MINB=4",), " 64 registers"), (("-DREALIGNED_U16=4",), " unroll 4"),
       (("-DREALIGNED_MINB=4", "-DREALIGNED_U16=4"), " 64 registers unroll 4"))
CHECK = ((31, 65), (4097, 33), (1009, 2003), (131, 999), (4097, 8191))


def check(case, dtype: str, stages: list, opts: tuple[str, ...], wrong: set) -> None:
    for r, c in CHECK:
        got = bench.bench_size(case, r, c, dtype, repeats=2, warmup=1, buffers=1, with_peers=False,
                               stages=stages, options=opts)
        bad = [x.name for x in got if x.note.startswith("WRONG")]
        wrong |= {(dtype, b, opts) for b in bad}
        print(f"check {r}x{c} {dtype} {opts}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    wrong: set = set()
    for dtype, shapes in LARGE.items():
        stages = [realigned(*c) for c in LARGE_CFG[dtype]]
        for order in ORDERS:
            opts = (f"-DREALIGNED_ORDER={order}",)
            check(case, dtype, stages, opts, wrong)
            for r, c in shapes:
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=stages,
                                       options=opts, suffix=f" order {order}")
                report(rows, got, r, c, dtype, out)
    stages = [realigned(16, 8, 256, 1), realigned(16, 16, 512, 1)]
    for opts, suffix in (((), ""), *F16):
        check(case, "float16", stages, opts, wrong)
        for r, c in ODD:
            got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False, stages=stages,
                                   options=opts, suffix=suffix)
            report(rows, got, r, c, "float16", out)
    print("wrong:", sorted(wrong) or "none", flush=True)


if __name__ == "__main__":
    main()
