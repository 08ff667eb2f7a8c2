"""vec_realigned: the bottom-edge chunks gathered with their loads issued together (GPU).

Usage: python3 scripts/experiments/edge_loads.py OUT.json
``-DREALIGNED_EDGE_SERIAL=1`` is the kernel of commit eb21dda: a chunk of an output row that runs
past the staged rows was written element by element, each element loaded from the input (also
those in the stage) and stored before the next was loaded. Without it such a chunk takes its
staged elements from the stage and the next output row's first ones from the input, all loads
issued before one 16-byte store. Every configuration timed is checked bit for bit (bench_size's
check) at the 17 shapes of realigned_wide.py in its dtype first, under both; then each point is
event-timed, 20 repeats, two rounds, both variants in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

VARIANTS = (("serial", ("-DREALIGNED_EDGE_SERIAL=1",)), ("batched", ()))
CONFIGS = {"float16": ((16, 8, 256), (20, 16, 512), (24, 16, 512), (16, 16, 512)),
           "float32": ((16, 32, 512), (16, 16, 256)),
           "float64": ((32, 32, 512), (32, 16, 512, 2))}
TIMED = {"float16": ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907), (8192, 8192)),
         "float32": ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907)),
         "float64": ((4097, 8191), (8191, 8193))}


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    for dtype, cfgs in CONFIGS.items():
        plan = [realigned(*c) for c in cfgs]
        for name, opts in VARIANTS:
            wrong: set = set()
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts)
                wrong |= {x.name for x in got if x.note.startswith("WRONG")}
            print(f"check {dtype} {name}, {len(plan)} configurations at {len(CHECK)} shapes: "
                  f"wrong {sorted(wrong) or 'none'}", flush=True)
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
