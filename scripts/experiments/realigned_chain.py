"""vec_realigned with a block's tiles taken down one tile column, the halo rows carried over in the
one staged tile (the kernel's CHAIN = 1), against one tile per block (GPU).

Usage: python3 scripts/experiments/realigned_chain.py OUT.json [DTYPE,...] [--no-check]
Every configuration is checked bit for bit (bench_size's check) at the small, edge and odd shapes of
realigned_wide.py before anything is timed; then each is event-timed at the odd shapes and two
aligned ones.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK, TIMED

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose.launch import dynamic_smem_bytes

#: Per dtype: the tiles the committed sweep chose, each with one tile per block and 2, 4, 8 chained.
SHAPES = {"float32": ((32, 16, 512), (32, 32, 512), (16, 16, 512)),
          "float64": ((32, 32, 512), (32, 16, 256)),
          "float16": ((16, 8, 256), (16, 16, 512), (32, 16, 512))}
CHAINS = ((), (2, 1), (4, 1), (8, 1))


def main() -> None:
    out = sys.argv[1]
    args = [a for a in sys.argv[2:] if not a.startswith("--")]
    dtypes = args[0].split(",") if args else list(SHAPES)
    case = get_case("transpose")
    rows: list = []
    wrong = set()
    plan = {}
    for dtype in dtypes:
        stages = [realigned(*s, *c) for s in SHAPES[dtype] for c in CHAINS]
        plan[dtype] = [s for s in stages if dynamic_smem_bytes(s, dtype) <= bench.MAX_DYNAMIC_SMEM]
        if "--no-check" in sys.argv:
            continue
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, dtype, repeats=2, warmup=1, buffers=1, with_peers=False,
                                   stages=[s for s in plan[dtype] if len(s.targs) > 3])
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
