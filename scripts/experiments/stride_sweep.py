"""vec_realigned float16 at odd shapes whose row strides are near 16 KB and away from it (GPU).

Usage: python3 scripts/experiments/stride_sweep.py OUT.json
At 8191x8193 and 4097x8191 (input or output rows 16382-16386 bytes apart) float16 runs 5-7 points
of memcpy below 12345x6789 and 7919x7907. Here rows and cols move one at a time away from 8192,
both odd, so that the input stride (2 cols bytes) or the output stride (2 rows bytes) changes
alone; each point is checked bit for bit (bench_size's check) and event-timed, 20 repeats.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.model.registry import get_case

CONFIGS = ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2))
SHAPES = {"float16": ((8191, 8193), (8191, 8209), (8191, 8449), (8191, 9001), (8209, 8193), (8449, 8193),
                      (9001, 8193), (9001, 9001), (4097, 8191), (4097, 8449), (4353, 8191), (12345, 6789)),
          "float32": ((8191, 8193), (8191, 9001), (9001, 8193), (9001, 9001))}
FLOAT32 = ((16, 16, 256), (32, 32, 512))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    for dtype, shapes in SHAPES.items():
        plan = [realigned(*c) for c in (CONFIGS if dtype == "float16" else FLOAT32)]
        for r, c in shapes:
            got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan)
            report(rows, got, r, c, dtype, out, ("stage", "ceiling"))


if __name__ == "__main__":
    main()
