"""vec_realigned with several tiles per block, double-buffered (the next tile's cp.async copies in
flight while this one is gathered and stored), against one tile per block (GPU).

Usage: python3 scripts/experiments/realigned_pipelined.py OUT.json [DTYPE,...]
Every configuration is checked bit for bit (bench_size's check) at small, edge and odd shapes
before anything is timed; then each is event-timed at the odd shapes and two aligned ones.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK, TIMED

from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose.launch import dynamic_smem_bytes
from profiler_report.model.registry import get_case

#: Per dtype: the tiles the committed sweep chose, each with 1, 2, 4 and 8 tiles per block.
SHAPES = {"float16": ((16, 8, 256), (16, 16, 512), (32, 16, 512)),
          "float32": ((32, 16, 512), (32, 32, 512), (16, 16, 512)),
          "float64": ((32, 32, 512), (32, 16, 512))}
TPB = (1, 2, 4, 8)


def main() -> None:
    out = sys.argv[1]
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else list(SHAPES)
    case = get_case("transpose")
    rows: list = []
    wrong = set()
    plan = {}
    for dtype in dtypes:
        stages = [realigned(*s, t) for s in SHAPES[dtype] for t in TPB]
        plan[dtype] = [s for s in stages if dynamic_smem_bytes(s, dtype) <= bench.MAX_DYNAMIC_SMEM]
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, dtype, repeats=2, warmup=1, buffers=1, with_peers=False,
                                   stages=plan[dtype])
            bad = [x.name for x in got if x.note.startswith("WRONG")]
            wrong |= {(dtype, b) for b in bad}
            print(f"check {r}x{c} {dtype}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
    for dtype in dtypes:
        for r, c in TIMED:
            got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan[dtype])
            report(rows, got, r, c, dtype, out)
    print("wrong:", sorted(wrong) or "none", flush=True)


if __name__ == "__main__":
    main()
