"""vec_realigned: the L2 prefetch-size hint (128 bytes) on the stage's cp.async where rows start off
a sector, against never and always; the bottom tiles' chunks in the float16 store skew's order
against in order (GPU).

Usage: python3 scripts/experiments/prefetch_rule.py OUT.json
The kernel as committed has the hint where cols is not a multiple of a sector's elements and the
bottom tiles in the skewed order; ``-DREALIGNED_PREFETCH=0`` / ``=2`` never / always hint,
``-DREALIGNED_EDGE_SKEW=0`` stores the bottom tiles' chunks in order (commit 463cd30's edge). The
committed kernel's configurations are checked bit for bit at the 17 shapes of realigned_wide.py in
every dtype first (bench_size's check; every timed launch is checked at its own size as well); then
each point is event-timed, 20 repeats, two rounds, every variant in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

VARIANTS = (("rule", ()), ("never", ("-DREALIGNED_PREFETCH=0",)), ("always", ("-DREALIGNED_PREFETCH=2",)),
            ("edge-in-order", ("-DREALIGNED_EDGE_SKEW=0",)))
CONFIGS = {"float16": ((16, 8, 256), (16, 16, 512), (20, 16, 512), (24, 16, 512)),
           "float32": ((16, 32, 512), (16, 16, 256)),
           "float64": ((32, 32, 512), (32, 16, 512, 2), (16, 16, 256))}
TIMED = {"float16": ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907), (8192, 8192), (4096, 4096)),
         "float32": ((4097, 8191), (8191, 8193), (12345, 6789), (8192, 8192)),
         "float64": ((4097, 8191), (8191, 8193), (16384, 16384))}


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
                for name, opts in VARIANTS:
                    got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False,
                                           stages=[realigned(*x) for x in cfgs], options=opts,
                                           suffix=f" {name} round {rnd}")
                    report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
