"""float16 vec_realigned: the rows-and-cols-odd path off (``-DREALIGNED_ODD=0``) and the edge rows
inlined again (``-DREALIGNED_EDGE_INLINE=1``) against the committed kernel (GPU).

Usage: python3 scripts/experiments/odd_edge_ab.py OUT.json
Every candidate is checked bit for bit (bench_size's check) at the 17 shapes of realigned_wide.py
under each variant first; then each point is event-timed, 20 repeats, three rounds, all variants
in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

CONFIGS = ((16, 8, 256), (32, 16, 512), (32, 8, 256))
VARIANTS = {"committed": (), "odd off": ("-DREALIGNED_ODD=0",), "edge inline": ("-DREALIGNED_EDGE_INLINE=1",)}
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    plan = [realigned(*c) for c in CONFIGS]
    rows: list = []
    for name, opts in VARIANTS.items():
        wrong: set = set()
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, "float16", repeats=3, warmup=1, buffers=1, with_peers=False,
                                   stages=plan, options=opts)
            wrong |= {x.name for x in got if x.note.startswith("WRONG")}
        print(f"check float16 {name}, {len(plan)} candidates at {len(CHECK)} shapes: wrong {sorted(wrong) or 'none'}",
              flush=True)
    for rnd in (1, 2, 3):
        for r, c in TIMED:
            for name, opts in VARIANTS.items():
                got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False, stages=plan,
                                       options=opts, suffix=f" {name} round {rnd}")
                report(rows, got, r, c, "float16", out)


if __name__ == "__main__":
    main()
