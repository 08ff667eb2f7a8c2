"""vec_realigned: the bottom-edge row offset computed where it is used (no spill at 40 registers),
and float16 tiles of 20, 24 and 28 chunk rows, three blocks of 512 threads per SM (GPU).

Usage: python3 scripts/experiments/f16_tiles.py OUT.json
``-DREALIGNED_GROWS_ASM=0`` is the kernel as before (the offset computed with the store pointer,
kept live across the interior path: NVRTC spilled it at 40 registers, float32 [16,32,512] among
them); ``-DREALIGNED_THREADS=1536`` sets the launch bounds for three 512-thread blocks per SM,
which tiles of 28 chunk rows or fewer fit in shared memory. Every variant is checked bit for bit
(bench_size's check) at the 17 shapes of realigned_wide.py first; then each point is event-timed,
20 repeats, two rounds, all variants in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

OLD = ("-DREALIGNED_GROWS_ASM=0",)
T1536 = ("-DREALIGNED_THREADS=1536",)
PLAN = {
    "float16": [("before", OLD, ((16, 8, 256), (32, 16, 512))),
                ("asm", (), ((16, 8, 256), (32, 16, 512))),
                ("1536", T1536, ((28, 16, 512), (24, 16, 512), (20, 16, 512), (32, 16, 512), (16, 8, 256))),
                ("1280", (), ((28, 16, 512), (24, 16, 512), (28, 8, 256)))],
    "float32": [("before", OLD, ((16, 32, 512), (16, 16, 256))),
                ("asm", (), ((16, 32, 512), (16, 16, 256)))],
}
TIMED = {"float16": ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192)),
         "float32": ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907))}


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    for dtype, variants in PLAN.items():
        for name, opts, cfgs in variants:
            plan = [realigned(*c) for c in cfgs]
            wrong: set = set()
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts)
                wrong |= {x.name for x in got if x.note.startswith("WRONG")}
            print(f"check {dtype} {name}, {len(plan)} candidates at {len(CHECK)} shapes: "
                  f"wrong {sorted(wrong) or 'none'}", flush=True)
    for dtype, variants in PLAN.items():
        for rnd in (1, 2):
            for r, c in TIMED[dtype]:
                for name, opts, cfgs in variants:
                    got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False,
                                           stages=[realigned(*x) for x in cfgs], options=opts,
                                           suffix=f" {name} round {rnd}")
                    report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
