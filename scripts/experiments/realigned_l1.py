"""vec_realigned with the sectors two tiles share read from L2 once: copies through L1
(-DREALIGNED_CA=1, cp.async.ca) and a block's TPB tiles consecutive, down a tile column
(-DREALIGNED_ORDER=1: the halo rows are the next tile's first rows) or along a tile row
(-DREALIGNED_ORDER=2: each row segment's extra sector is the next tile's first), against the
committed kernel (GPU).

Usage: python3 scripts/experiments/realigned_l1.py OUT.json [DTYPE,...]
Every configuration is checked bit for bit (bench_size's check) at the small, edge and odd shapes
of realigned_wide.py under each option set that changes the tile order, before anything is timed;
then every option set is event-timed at the odd shapes and 8192x8192 in the same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose.launch import realigned_smem_bytes

CONFIGS = {
    "float16": ((16, 8, 256), (16, 8, 256, 2), (16, 8, 256, 4), (16, 16, 512, 2), (32, 16, 512, 2)),
    "float32": ((32, 16, 512), (32, 32, 512), (32, 16, 512, 2), (32, 16, 512, 4), (32, 8, 256, 2)),
    "float64": ((32, 32, 512), (32, 16, 512, 2), (32, 32, 512, 2), (32, 8, 256, 2), (32, 16, 512, 4)),
}
OPTIONS = (((), ""), (("-DREALIGNED_CA=1",), " ca"), (("-DREALIGNED_CA=1", "-DREALIGNED_ORDER=1"), " ca col"),
           (("-DREALIGNED_CA=1", "-DREALIGNED_ORDER=2"), " ca row"), (("-DREALIGNED_ORDER=2",), " row"))
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192))


def plan(dtype: str) -> list:
    v = 16 // {"float16": 2, "float32": 4, "float64": 8}[dtype]
    return [realigned(*c) for c in CONFIGS[dtype]
            if realigned_smem_bytes(c[0], c[1], v) * (2 if len(c) > 3 else 1) <= bench.MAX_DYNAMIC_SMEM]


def main() -> None:
    out = sys.argv[1]
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["float16", "float32", "float64"]
    case = get_case("transpose")
    rows: list = []
    wrong = set()
    for dtype in dtypes:
        for opts, suffix in OPTIONS[2:]:
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=2, warmup=1, buffers=1, with_peers=False,
                                       stages=plan(dtype), options=opts, suffix=suffix)
                bad = [x.name for x in got if x.note.startswith("WRONG")]
                wrong |= {(dtype, b) for b in bad}
            print(f"check {dtype}{suffix}: {len(CHECK)} shapes", flush=True)
    print("wrong:", sorted(wrong) or "none", flush=True)
    if wrong:
        return
    for dtype in dtypes:
        for r, c in TIMED:
            for opts, suffix in OPTIONS:
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan(dtype),
                                       options=opts, suffix=suffix)
                report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
