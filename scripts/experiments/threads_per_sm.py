"""vec_realigned's launch bounds with its edge rows out of line: resident threads per SM (GPU).

Usage: python3 scripts/experiments/threads_per_sm.py OUT.json [DTYPE,...]
With the bottom-edge output rows in a function of their own (``realigned_rows_edge``, not inlined),
NVRTC's interior path keeps no spill at 40 or 32 registers, so launch bounds for 1536 or 2048
threads per SM (``-DREALIGNED_THREADS``) may now pay where 1280 (float16) was chosen to avoid one.
Every candidate is checked bit for bit (bench_size's check) at the 17 shapes of realigned_wide.py
at each bound first; then each point is event-timed, 20 repeats, two rounds, all bounds in the
same process.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench

CONFIGS = {"float16": ((16, 8, 256), (32, 16, 512), (16, 16, 256), (32, 8, 256), (16, 8, 256, 2)),
           "float32": ((16, 16, 256), (16, 32, 512), (32, 32, 512)),
           "float64": ((32, 32, 512), (32, 16, 512, 2))}
THREADS = {"float16": (1280, 1536, 2048), "float32": (1536, 2048), "float64": (1536, 2048)}
TIMED = {"float16": ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192)),
         "float32": ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907)),
         "float64": ((8191, 8193), (16384, 16384))}


def main() -> None:
    out = sys.argv[1]
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else list(CONFIGS)
    case = get_case("transpose")
    rows: list = []
    for dtype in dtypes:
        plan = [realigned(*c) for c in CONFIGS[dtype]]
        for t in THREADS[dtype]:
            opts = (f"-DREALIGNED_THREADS={t}",)
            wrong: set = set()
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts)
                wrong |= {x.name for x in got if x.note.startswith("WRONG")}
            print(f"check {dtype} {t} threads/SM, {len(plan)} candidates at {len(CHECK)} shapes: "
                  f"wrong {sorted(wrong) or 'none'}", flush=True)
        for rnd in (1, 2):
            for r, c in TIMED[dtype]:
                for t in THREADS[dtype]:
                    got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False, stages=plan,
                                           options=(f"-DREALIGNED_THREADS={t}",), suffix=f" {t} round {rnd}")
                    report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
