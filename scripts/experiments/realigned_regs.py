"""vec_realigned float16 at the odd shapes under launch bounds for 1536 (the committed 40
registers), 1280 and 1024 threads per SM (-DREALIGNED_MIN_THREADS), in the same process (GPU).

Usage: python3 scripts/experiments/realigned_regs.py OUT.json          (event timing)
       ncu --clock-control none -k regex:transpose_vec_realigned --metrics M,... \\
         python3 scripts/experiments/realigned_regs.py OUT.json ncu   (one launch of each, for ncu)
bench_size checks every configuration bit for bit at each point before it is timed.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_ncu import launch_once

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import import_cupy

CONFIGS = ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2))
OPTIONS = (((), " 1536"), (("-DREALIGNED_MIN_THREADS=1280",), " 1280"), (("-DREALIGNED_MIN_THREADS=1024",), " 1024"))
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    if sys.argv[2:] == ["ncu"]:
        cupy = import_cupy()
        for opts, _ in OPTIONS:
            for r, c in ((8191, 8193), (12345, 6789)):
                launch_once(cupy, case, realigned(*CONFIGS[0]), r, c, "float16", opts)
        return
    rows: list = []
    for r, c in TIMED:
        for opts, suffix in OPTIONS:
            got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False,
                                   stages=[realigned(*cfg) for cfg in CONFIGS], options=opts, suffix=suffix)
            report(rows, got, r, c, "float16", out)


if __name__ == "__main__":
    main()
