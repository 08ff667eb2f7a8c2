"""vec_realigned's wider tiles (NT = 16 x TCC: two output passes per warp) and its rows-and-cols-odd
path (rotated gathers, their swizzle) against the single-pass tiles and the path turned off (GPU).

Usage: python3 scripts/experiments/realigned_wide.py OUT.json [DTYPE,... [TRC,TCC,NT:...]]
(default: every dtype at CONFIGS)
Every configuration is checked bit for bit (bench_size's check) at small and edge shapes in every
dtype before anything is timed; then each is event-timed at the odd shapes and two aligned ones,
with -DREALIGNED_ODD=0 (the path off) as the comparison.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose.launch import realigned_smem_bytes
from profiler_report.model.registry import get_case

CONFIGS = ((32, 16, 512), (32, 32, 512), (32, 16, 256), (32, 8, 256), (32, 32, 1024))
CHECK = ((1, 1), (31, 65), (4097, 33), (33, 4097), (7, 5), (1009, 2003), (2003, 1009), (257, 129), (3, 1000),
         (133, 1000), (131, 999), (261, 37), (1, 4097), (4097, 1), (70, 70), (135, 263), (4097, 8191))
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192), (16384, 16384))


def main() -> None:
    out = sys.argv[1]
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["float32", "float64", "float16"]
    configs = [tuple(map(int, c.split(","))) for c in sys.argv[3].split(":")] if len(sys.argv) > 3 else CONFIGS
    case = get_case("transpose")
    rows: list = []
    wrong = set()
    plan = {}
    for dtype in dtypes:
        v = 16 // {"float16": 2, "float32": 4, "float64": 8}[dtype]
        plan[dtype] = [realigned(*c) for c in configs if realigned_smem_bytes(c[0], c[1], v) <= bench.MAX_DYNAMIC_SMEM]
        for opts in ((), ("-DREALIGNED_ODD=0",)):
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan[dtype], options=opts)
                bad = [x.name for x in got if x.note.startswith("WRONG")]
                wrong |= {(dtype, b, opts) for b in bad}
                print(f"check {r}x{c} {dtype} {opts}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
    for dtype in dtypes:
        for r, c in TIMED:
            got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan[dtype])
            report(rows, got, r, c, dtype, out)
            if r & c & 1:
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan[dtype][:2],
                                       options=("-DREALIGNED_ODD=0",), suffix=" odd path off")
                report(rows, got, r, c, dtype, out)
    print("wrong:", sorted(wrong) or "none", flush=True)


if __name__ == "__main__":
    main()
