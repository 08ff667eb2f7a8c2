"""vec_realigned with thread-block clusters of CX tiles side by side (each tile but a cluster's last
takes its rows' extra sector from the next tile's shared memory instead of L2), against one tile
per cluster, and the kernel compiled without the cluster attribute (GPU).

Usage: python3 scripts/experiments/realigned_cluster.py OUT.json [DTYPE,...]
Every configuration is checked bit for bit at small, edge and odd shapes in every dtype before
anything is timed.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK, TIMED

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose.launch import dynamic_smem_bytes

#: Per dtype: [chunk rows, chunk columns, threads, tiles per block, tiles per cluster].
SHAPES = {"float32": ((32, 16, 512, 1, 1), (32, 16, 512, 1, 2), (32, 16, 512, 1, 4), (32, 32, 512, 1, 1),
                      (32, 32, 512, 1, 2)),
          "float64": ((32, 32, 512, 1, 1), (32, 32, 512, 1, 2), (32, 32, 512, 1, 4), (32, 16, 512, 1, 2),
                      (32, 16, 512, 1, 4)),
          "float16": ((16, 8, 256, 1, 1), (16, 8, 256, 1, 2), (16, 8, 256, 1, 4), (16, 16, 512, 1, 2),
                      (32, 16, 512, 1, 2))}
#: Extra NVRTC options and the suffix of their rows: the kernel without __cluster_dims__ (the
#: committed form), and float16's rows without the register spill of unrolling 4 chunks.
VARIANTS = ((("-DREALIGNED_NO_CLUSTER_ATTR",), " no cluster attribute"), (("-DREALIGNED_U16=2",), " unroll 2"))


def main() -> None:
    out = sys.argv[1]
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else list(SHAPES)
    case = get_case("transpose")
    rows: list = []
    wrong = set()
    plan = {}
    for dtype in dtypes:
        stages = [realigned(*s) for s in SHAPES[dtype]]
        plan[dtype] = [s for s in stages if dynamic_smem_bytes(s, dtype) <= bench.MAX_DYNAMIC_SMEM]
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, dtype, repeats=2, warmup=1, buffers=1, with_peers=False,
                                   stages=plan[dtype])
            bad = [x.name for x in got if x.note.startswith("WRONG")]
            wrong |= {(dtype, b) for b in bad}
            print(f"check {r}x{c} {dtype}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
    for dtype in dtypes:
        singles = [s for s in plan[dtype] if s.targs[4] == "1"]
        for r, c in TIMED:
            got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan[dtype])
            report(rows, got, r, c, dtype, out)
            for opts, suffix in VARIANTS if r & c & 1 else VARIANTS[:1]:
                if suffix == " unroll 2" and dtype != "float16":
                    continue
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=singles,
                                       options=opts, suffix=suffix)
                report(rows, got, r, c, dtype, out)
    print("wrong:", sorted(wrong) or "none", flush=True)


if __name__ == "__main__":
    main()
