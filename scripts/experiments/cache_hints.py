"""vec_realigned with cache hints: st.global.cs or an L2 evict_first policy on the output stores, the
L2 prefetch-size hint (128 or 256 bytes) on the stage's cp.async (GPU).

Usage: python3 scripts/experiments/cache_hints.py OUT.json
The knobs (``-DREALIGNED_ST``, ``-DREALIGNED_PREFETCH``) change no address and no value: every
timed launch is still checked bit for bit at its own size by bench_size. Each point is event-timed,
20 repeats, two rounds, every variant in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

VARIANTS = (("plain", ()), ("st.cs", ("-DREALIGNED_ST=1",)), ("evict_first", ("-DREALIGNED_ST=2",)),
            ("prefetch128", ("-DREALIGNED_PREFETCH=128",)), ("prefetch256", ("-DREALIGNED_PREFETCH=256",)))
CONFIGS = {"float16": ((16, 8, 256), (16, 16, 512), (20, 16, 512)),
           "float32": ((16, 32, 512),),
           "float64": ((32, 32, 512), (32, 16, 512, 2))}
TIMED = {"float16": ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907), (8192, 8192)),
         "float32": ((4097, 8191), (8191, 8193)),
         "float64": ((8191, 8193), (16384, 16384))}


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
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
