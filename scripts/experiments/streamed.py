"""vec_streamed (a ring of staged 32-row groups streamed down a strip of the input) against
vec_realigned's best configurations, same process (GPU).

Usage: python3 scripts/experiments/streamed.py OUT.json [DTYPE,...]
Every configuration is checked bit for bit (bench_size's check) at the 17 small, edge and odd
shapes of realigned_wide.py before anything is timed; then each is event-timed (20 repeats) at the
odd shapes and three aligned ones.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.manifest import Stage
from profiler_report.cases.transpose import bench

#: (chunk columns, threads, ring groups) per dtype
STREAMED = {"float16": ((16, 512, 4), (16, 512, 6), (8, 256, 4), (8, 256, 8), (32, 1024, 4)),
            "float32": ((16, 512, 4), (8, 256, 4), (32, 1024, 4)),
            "float64": ((16, 512, 4), (8, 256, 4), (32, 1024, 4))}
#: vec_realigned's best configurations at the odd shapes (bench sweeps)
REALIGNED = {"float16": ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2)),
             "float32": ((16, 16, 256), (16, 32, 512), (32, 32, 512)),
             "float64": ((32, 32, 512), (32, 16, 512, 2))}
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192), (16384, 16384))


def streamed(*shape: int) -> Stage:
    """vec_streamed at [chunk columns, threads, ring groups]."""
    return Stage(f"vec_streamed [{','.join(map(str, shape))}]", "transpose_vec_streamed", "streamed",
                 launch="vec_streamed", targs=tuple(map(str, shape)))


def main() -> None:
    out = sys.argv[1]
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["float16", "float32", "float64"]
    case = get_case("transpose")
    rows: list = []
    wrong = set()
    for dtype in dtypes:
        plan = [streamed(*c) for c in STREAMED[dtype]]
        for opts in ((), ("-DSTREAMED_ODD=0",)) if dtype == "float16" else ((),):
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts)
                bad = [x.name for x in got if x.note.startswith("WRONG")]
                wrong |= {(dtype, b) for b in bad}
                print(f"check {r}x{c} {dtype} {opts}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
    for dtype in dtypes:
        plan = [streamed(*c) for c in STREAMED[dtype] if (dtype, streamed(*c).id) not in wrong]
        plan += [realigned(*c) for c in REALIGNED[dtype]]
        for r, c in TIMED:
            got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan)
            report(rows, got, r, c, dtype, out)
            if dtype == "float16" and r & c & 1:
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan[:3],
                                       options=("-DSTREAMED_ODD=0",), suffix=" odd path off")
                report(rows, got, r, c, dtype, out)
    print("wrong:", sorted(wrong) or "none", flush=True)


if __name__ == "__main__":
    main()
