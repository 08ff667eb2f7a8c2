"""vec_realigned: tiles of 8 and 12 chunk rows (float16: 64 and 96 input rows; float32: 32) against
the sweep's candidates, at the DRAM points of few waves and the odd ones (GPU).

Usage: python3 scripts/experiments/small_tiles.py OUT.json
Every configuration is checked bit for bit at the 17 shapes of realigned_wide.py in its dtype first
(bench_size's check; every timed launch is checked at its own size as well); then each point is
event-timed, 20 repeats, two rounds, in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

CONFIGS = {"float16": ((16, 8, 256), (16, 16, 512), (24, 16, 512), (12, 8, 256), (12, 16, 512), (8, 8, 256),
                       (8, 16, 512), (8, 16, 256)),
           "float32": ((16, 32, 512), (16, 16, 256), (8, 32, 512), (8, 16, 256))}
TIMED = {"float16": ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907), (4096, 4096), (8192, 4096),
                     (2048, 8192), (8192, 8192)),
         "float32": ((4097, 8191), (4096, 4096), (8191, 8193))}


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    for dtype, cfgs in CONFIGS.items():
        wrong: set = set()
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                   stages=[realigned(*x) for x in cfgs])
            wrong |= {x.name for x in got if x.note.startswith("WRONG")}
        print(f"check {dtype}, {len(cfgs)} configurations at {len(CHECK)} shapes: wrong {sorted(wrong) or 'none'}",
              flush=True)
    for dtype, cfgs in CONFIGS.items():
        for rnd in (1, 2):
            for r, c in TIMED[dtype]:
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False,
                                       stages=[realigned(*x) for x in cfgs], suffix=f" round {rnd}")
                report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
