"""vec_realigned's tile order at the odd float16 shapes: down a tile column (the kernel's), along a
tile row, and diagonal down the tile columns (GPU).

Usage: python3 scripts/experiments/tile_order.py OUT.json
``-DREALIGNED_ORDER=1``: block t takes tile row t / tiles_c, tile column t % tiles_c (the blocks
resident together read whole input rows and write short pieces of every output row);
``=2``: tile row t % tiles_r of tile column (t / tiles_r + t % tiles_r) % tiles_c (the tiles that
share a halo or a row's extra sector still run together, but the output rows written at once are
spread over tiles_r tile columns). Every order is checked bit for bit (bench_size's check) at the
17 shapes of realigned_wide.py in every dtype first, then event-timed, 20 repeats, two rounds.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

ORDERS = (0, 1, 2)
CONFIGS = {"float16": ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2)), "float32": ((16, 16, 256), (32, 32, 512)),
           "float64": ((32, 32, 512), (32, 16, 512, 2))}
TIMED = {"float16": ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8209, 8193), (8192, 8192)),
         "float32": ((8191, 8193), (12345, 6789)), "float64": ((8191, 8193), (16384, 16384))}


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    wrong: set = set()
    for dtype, configs in CONFIGS.items():
        plan = [realigned(*c) for c in configs]
        for order in ORDERS[1:]:
            opts = (f"-DREALIGNED_ORDER={order}",)
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts)
                wrong |= {(dtype, x.name, order) for x in got if x.note.startswith("WRONG")}
            print(f"check {dtype} order {order}: {'WRONG' if wrong else 'all exact'}", flush=True)
    print("wrong:", sorted(wrong) or "none", flush=True)
    for rnd in (1, 2):
        for dtype, shapes in TIMED.items():
            plan = [realigned(*c) for c in CONFIGS[dtype]]
            for r, c in shapes:
                for order in ORDERS:
                    got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan,
                                           options=(f"-DREALIGNED_ORDER={order}",),
                                           suffix=f" order {order} round {rnd}")
                    report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
