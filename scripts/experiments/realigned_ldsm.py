"""vec_realigned's 2-byte interior tiles through ldmatrix (-DREALIGNED_LDSM=1, launches of two or
more tiles per block: rows copied as they are, realigned in registers into a second stage of 8 x 8
blocks, transposed by ldmatrix.x4.trans on the way out) against the element gather (GPU).

Usage: python3 scripts/experiments/realigned_ldsm.py OUT.json [TRC,TCC,NT[,TPB]:...]
Every configuration is checked bit for bit (bench_size's check) at the small, edge and odd shapes
of realigned_wide.py with the path on, before anything is timed; then both are event-timed at the
odd float16 shapes and two aligned ones, in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK, TIMED

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

CONFIGS = ((16, 8, 256), (16, 8, 256, 2), (16, 8, 256, 4), (16, 16, 512, 2), (16, 16, 256, 2), (32, 8, 256, 2),
           (32, 16, 512, 2))
ON = ("-DREALIGNED_LDSM=1",)


def main() -> None:
    out = sys.argv[1]
    configs = [tuple(map(int, c.split(","))) for c in sys.argv[2].split(":")] if len(sys.argv) > 2 else CONFIGS
    case = get_case("transpose")
    plan = [realigned(*c) for c in configs]
    rows: list = []
    wrong = set()
    for r, c in CHECK + ((8191, 8193), (7919, 7907)):
        got = bench.bench_size(case, r, c, "float16", repeats=2, warmup=1, buffers=1, with_peers=False,
                               stages=plan, options=ON)
        bad = [x.name for x in got if x.note.startswith("WRONG")]
        wrong |= set(bad)
        print(f"check {r}x{c} float16 ldsm: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
    if wrong:
        print("wrong:", sorted(wrong), "(nothing timed)", flush=True)
        return
    for r, c in TIMED:
        for opts, suffix in ((ON, " ldsm"), ((), "")):
            got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False, stages=plan,
                                   options=opts, suffix=suffix)
            report(rows, got, r, c, "float16", out)
    print("wrong:", sorted(wrong) or "none", flush=True)


if __name__ == "__main__":
    main()
