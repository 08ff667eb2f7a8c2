"""vec_realigned at the odd float16 shapes: the rows-and-cols-odd path off (-DREALIGNED_ODD=0) and
launch bounds for 2048 threads per SM (-DREALIGNED_MIN_THREADS=2048: at most 32 registers, 24
bytes spilled at [16,8,256]) against the committed kernel, in the same process (GPU).

Usage: python3 scripts/experiments/realigned_f16.py OUT.json
bench_size checks every configuration bit for bit at each point before it is timed.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

CONFIGS = ((16, 8, 256), (16, 8, 256, 2), (32, 16, 512))
OPTIONS = (((), ""), (("-DREALIGNED_ODD=0",), " odd off"), (("-DREALIGNED_MIN_THREADS=2048",), " 2048"),
           (("-DREALIGNED_ODD=0", "-DREALIGNED_MIN_THREADS=2048"), " odd off 2048"))
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    plan = [realigned(*c) for c in CONFIGS]
    rows: list = []
    for rep in range(2):
        for r, c in TIMED:
            for opts, suffix in OPTIONS:
                got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False, stages=plan,
                                       options=opts, suffix=f"{suffix} #{rep + 1}")
                report(rows, got, r, c, "float16", out)


if __name__ == "__main__":
    main()
