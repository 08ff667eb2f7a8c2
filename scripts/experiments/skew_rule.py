"""vec_realigned's float16 store skew as committed (on where the output row stride is within 16
bytes of a multiple of 256) against it turned off (``-DREALIGNED_SKEW=0``) (GPU).

Usage: python3 scripts/experiments/skew_rule.py OUT.json        (checks, then timings)
       python3 scripts/experiments/skew_rule.py OUT.json ncu    (one launch of each, for ncu)
Every float16 bench candidate is checked bit for bit (bench_size's check) at the 17 shapes of
realigned_wide.py first; then each point is event-timed, 20 repeats, two rounds.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_ncu import launch_once
from realigned_wide import CHECK

from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import import_cupy
from profiler_report.model.registry import get_case

CONFIGS = ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2))
TIMED = ((8191, 8193), (4097, 8191), (8449, 8193), (8192, 8192), (12345, 6789), (7919, 7907))
OFF = ("-DREALIGNED_SKEW=0",)
NCU = (((16, 8, 256), 8191, 8193, ()), ((16, 8, 256), 8191, 8193, OFF), ((32, 16, 512), 8191, 8193, ()),
       ((16, 8, 256, 2), 8191, 8193, ()))


def main() -> None:
    out = sys.argv[1]
    case = get_case("transpose")
    if sys.argv[2:] == ["ncu"]:
        cupy = import_cupy()
        for cfg, r, c, opts in NCU:
            launch_once(cupy, case, realigned(*cfg), r, c, "float16", opts)
        return
    cands = bench.config_stages(case, "float16")
    wrong: set = set()
    for r, c in CHECK:
        got = bench.bench_size(case, r, c, "float16", repeats=3, warmup=1, buffers=1, with_peers=False, stages=cands)
        wrong |= {x.name for x in got if x.note.startswith("WRONG")}
    print(f"check float16, {len(cands)} candidates at {len(CHECK)} shapes: wrong {sorted(wrong) or 'none'}", flush=True)
    rows: list = []
    plan = [realigned(*c) for c in CONFIGS]
    for rnd in (1, 2):
        for r, c in TIMED:
            for opts in ((), OFF):
                got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False, stages=plan,
                                       options=opts, suffix=f" {'skew off' if opts else 'committed'} round {rnd}")
                report(rows, got, r, c, "float16", out)


if __name__ == "__main__":
    main()
