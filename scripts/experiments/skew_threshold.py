"""Where the float16 store skew starts to pay: vec_realigned with it always on
(``-DREALIGNED_SKEW=2``) against never (``=0``) at output row strides 2 to 34 bytes off a
multiple of 256 (GPU).

Usage: python3 scripts/experiments/skew_threshold.py OUT.json
Rows 8177 to 8209 at 8193 cols: the output row stride, 2 rows bytes, is 16354 to 16418, i.e.
-30 to +34 bytes from 64 x 256. Each kernel is checked bit for bit at its point (bench_size's
check) and event-timed, 20 repeats, two rounds, in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.model.registry import get_case

ROWS = (8177, 8185, 8189, 8191, 8193, 8195, 8197, 8199, 8201, 8205, 8209)
PLAN = (realigned(16, 8, 256), realigned(32, 16, 512))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    for rnd in (1, 2):
        for r in ROWS:
            for k in (0, 2):
                got = bench.bench_size(case, r, 8193, "float16", repeats=20, with_peers=False, stages=list(PLAN),
                                       options=(f"-DREALIGNED_SKEW={k}",),
                                       suffix=f" skew {'on' if k else 'off'} d={(2 * r + 128) % 256 - 128} round {rnd}")
                report(rows, got, r, 8193, "float16", out)


if __name__ == "__main__":
    main()
