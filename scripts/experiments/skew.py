"""vec_realigned with the rows of each warp store skewed (``-DREALIGNED_SKEW=k``: row g's lanes
start at chunk k g of the row), k = 1, 2 and 4 chunks for float16 (4 = the skew of phases.py's
run 1), against the committed kernel (GPU).

Usage: python3 scripts/experiments/skew.py OUT.json        (the bench checks and timings)
       python3 scripts/experiments/skew.py OUT.json ncu    (one launch of each, for ncu)
Each k is checked bit for bit (bench_size's check) at the 17 shapes of realigned_wide.py in each
dtype it is timed in first; then every point is event-timed, 20 repeats, two rounds.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_ncu import launch_once
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import import_cupy

SKEWS = {"float16": (0, 1, 2, 4), "float32": (0, 2, 8), "float64": (0, 2, 16)}
CONFIGS = {"float16": ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2)), "float32": ((16, 16, 256), (32, 32, 512)),
           "float64": ((32, 32, 512), (32, 16, 512, 2))}
TIMED = {"float16": ((8191, 8193), (8209, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192),
                     (9001, 8193)),
         "float32": ((8191, 8193), (12345, 6789), (8192, 8192)), "float64": ((8191, 8193), (16384, 16384))}
NCU = (("float16", (16, 8, 256)), ("float16", (32, 16, 512)), ("float16", (16, 8, 256, 2)))


def opts(k: int) -> tuple[str, ...]:
    return (f"-DREALIGNED_SKEW={k}",) if k else ()


def checks(case: object) -> None:
    wrong: set = set()
    for dtype, ks in SKEWS.items():
        plan = [realigned(*c) for c in CONFIGS[dtype]]
        for k in ks[1:]:
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts(k))
                wrong |= {(dtype, x.name, k) for x in got if x.note.startswith("WRONG")}
            print(f"check {dtype} skew {k}: {'WRONG' if wrong else 'all exact'}", flush=True)
    print("wrong:", sorted(wrong) or "none", flush=True)


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    if sys.argv[2:] == ["ncu"]:
        cupy = import_cupy()
        for dtype, cfg in NCU:
            for k in SKEWS[dtype]:
                launch_once(cupy, case, realigned(*cfg), 8191, 8193, dtype, opts(k))
        return
    checks(case)
    rows: list = []
    for rnd in (1, 2):
        for dtype, shapes in TIMED.items():
            plan = [realigned(*c) for c in CONFIGS[dtype]]
            for r, c in shapes:
                for k in SKEWS[dtype]:
                    got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan,
                                           options=opts(k), suffix=f" skew {k} round {rnd}")
                    report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
