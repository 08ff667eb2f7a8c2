"""Where vec_realigned float16 spends its time at the odd shapes: the kernel with its gather, its
global stores or its loads taken out (timing probes), and two changes that keep it exact: rows
of one warp store skewed, and 512-thread float16 tiles at 3 blocks per SM (GPU).

Usage: python3 scripts/experiments/phases.py OUT.json
Probes (``-DREALIGNED_PROBE``; their output is wrong by design, so they are timed, not checked,
and are no transpose): 1 one aligned 16-byte shared load per output chunk instead of the
element gather, 2 no global stores, 3 no global loads. ``-DREALIGNED_SKEW=1``: lane g of a warp
store writes its row's chunk (q + g) mod QN at step q (the V rows of one store at different
offsets). ``-DREALIGNED_F16_512=3``: launch bounds of 3 blocks of 512 threads for float16 (the
rule gives 2). Both are checked bit for bit (bench_size's check) at the 17 shapes of
realigned_wide.py first; then every point is event-timed, 20 repeats, two rounds.
"""

from __future__ import annotations

import statistics
import sys
from typing import Any

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import event_times_us, import_cupy, memcpy_fn
from profiler_report.live.kernels import Kernels, compile_module

F16 = ((8191, 8193), (8209, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192), (9001, 8193))
PROBED = ((16, 8, 256), (32, 16, 512))
CHECKED = {"float16": ((16, 8, 256), (32, 16, 512), (16, 8, 256, 2), (16, 16, 512)),
           "float32": ((16, 16, 256), (32, 32, 512)), "float64": ((32, 32, 512), (32, 16, 512, 2))}
OTHER = {"float32": ((8191, 8193), (12345, 6789)), "float64": ((8191, 8193), (16384, 16384))}
SKEW, F16_512 = ("-DREALIGNED_SKEW=1",), ("-DREALIGNED_F16_512=3",)


def median_us(fn: Any, pairs: list) -> float:
    return statistics.median(event_times_us(fn, pairs, repeats=20, warmup=3))


def probes(cupy: Any, case: Any) -> None:
    """Print each probe's % of the same-size memcpy (timing only: outputs are wrong by design)."""
    for r, c in F16:
        pairs = bench.make_pairs(case, cupy, r, c, "float16", 3)
        bench.warm_sm_clocks(cupy, pairs)
        mc = median_us(memcpy_fn(cupy), pairs)
        print(f"{r}x{c} float16 probes: memcpy {mc:.1f} us", flush=True)
        for cfg in PROBED:
            st = realigned(*cfg)
            line = []
            for p in (0, 1, 2, 3):
                module, names = compile_module(case, "float16", (f"-DREALIGNED_PROBE={p}",), extra=(st,))
                k = Kernels(module, names, "float16", case)

                def fn(a: Any, o: Any, k: Any = k, st: Any = st, r: int = r, c: int = c) -> None:
                    k.launch(st, a, o, {"rows": r, "cols": c})
                us = median_us(fn, pairs)
                line.append(f"probe {p} {us:6.1f} us {100 * mc / us:5.1f}%")
            print(f"    {st.id:<28} " + " | ".join(line), flush=True)


def checks(case: Any) -> None:
    wrong: set = set()
    for dtype, cfgs in CHECKED.items():
        for opts in (SKEW, F16_512) if dtype == "float16" else (SKEW,):
            plan = [realigned(*c) for c in (cfgs if opts == SKEW else ((16, 16, 512),))]
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=plan, options=opts)
                wrong |= {(dtype, x.name, opts) for x in got if x.note.startswith("WRONG")}
            print(f"check {dtype} {opts}: {'WRONG' if wrong else 'all exact'}", flush=True)
    print("wrong:", sorted(wrong) or "none", flush=True)


def timed(case: Any, out: str, rows: list, rnd: int) -> None:
    for r, c in F16:
        for opts, cfgs in (((), CHECKED["float16"]), (SKEW, CHECKED["float16"]), (F16_512, ((16, 16, 512),))):
            got = bench.bench_size(case, r, c, "float16", repeats=20, with_peers=False,
                                   stages=[realigned(*x) for x in cfgs], options=opts,
                                   suffix=f" {' '.join(opts) or 'committed'} round {rnd}")
            report(rows, got, r, c, "float16", out)
    for dtype, shapes in OTHER.items():
        for r, c in shapes:
            for opts in ((), SKEW):
                got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False,
                                       stages=[realigned(*x) for x in CHECKED[dtype]], options=opts,
                                       suffix=f" {' '.join(opts) or 'committed'} round {rnd}")
                report(rows, got, r, c, dtype, out)


def main() -> None:
    out = sys.argv[1]
    cupy = import_cupy()
    case = get_case("transpose")
    probes(cupy, case)
    checks(case)
    rows: list = []
    for rnd in (1, 2):
        timed(case, out, rows, rnd)


if __name__ == "__main__":
    main()
