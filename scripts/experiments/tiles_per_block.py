"""More double-buffered tiles per block at the largest aligned float64 shapes (GPU).

Usage: python3 scripts/experiments/tiles_per_block.py OUT.json
Each configuration is checked bit for bit (bench_size's check) at the 17 shapes of
realigned_wide.py in float64 first; then all are event-timed (20 repeats) at 16384x16384 and
8192x16384 float64, in two rounds in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases.transpose import bench
from profiler_report.model.registry import get_case

CONFIGS = ((32, 16, 512, 2), (32, 16, 512, 4), (32, 16, 512, 8), (32, 32, 512, 2), (32, 32, 512, 4),
           (32, 16, 256, 2), (32, 16, 256, 4))
TIMED = ((16384, 16384), (8192, 16384))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    plan = [realigned(*c) for c in CONFIGS]
    rows: list = []
    for r, c in CHECK:
        got = bench.bench_size(case, r, c, "float64", repeats=3, warmup=1, buffers=1, with_peers=False, stages=plan)
        bad = [x.name for x in got if x.note.startswith("WRONG")]
        print(f"check {r}x{c} float64: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
    for rnd in (1, 2):
        for r, c in TIMED:
            got = bench.bench_size(case, r, c, "float64", repeats=20, with_peers=False, stages=plan,
                                   suffix=f" round {rnd}")
            report(rows, got, r, c, "float64", out)


if __name__ == "__main__":
    main()
