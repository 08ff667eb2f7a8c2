"""Experiment (GPU): the bf16 GEMM's 128 x 256 stages with and without the grouped tile order, and
the persistent stage at other group heights and pipeline depths, event-timed against cuBLAS in one
process at 8192^3 (each checked against the case's reference first, then timed in turns); then the fp32 GEMM's
warptile at extra tile shapes against cuBLAS at 4096^3. Prints one table per case.

usage: python3 lab/hgemm/order_variants.py [--repeats 20]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from profiler_report.cases.gemm import bench as gb
from profiler_report.cases.hgemm import bench as hb
from profiler_report.live.gpu import import_cupy
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.registry import get_case

HGEMM_VARIANTS = [("warp_specialized", "4", "1"), ("persistent", "4", "1"),
                  ("persistent", "4", "8"), ("persistent", "4", "32"),
                  ("persistent", "3", "16"), ("warp_specialized", "3", "16")]
GEMM_SHAPES = [(128, 256, 8, 32, 128, 4, 8, 4, 256), (128, 256, 8, 64, 64, 2, 8, 8, 256),
               (128, 256, 8, 128, 32, 1, 8, 4, 256), (128, 256, 8, 64, 64, 4, 8, 4, 256)]


def hgemm(repeats: int) -> None:
    case = get_case("hgemm")
    size = {"m": 8192, "n": 8192, "k": 8192}
    by_id = {s.id: s for s in case.manifest.stages}
    variants = [replace(by_id[i], id=f"{i} [{a},{g}]", targs=(a, g)) for i, a, g in HGEMM_VARIANTS]
    module, names = compile_module(case, "bfloat16", extra=tuple(variants))
    k = Kernels(module, names, "bfloat16", case)
    cupy = import_cupy()
    first = case.manifest.stages[0]
    pairs = [(case.make_input(cupy, size, "bfloat16", seed=i + 1), case.make_output(cupy, first, size, "bfloat16"))
             for i in range(2)]
    t = hb._Timing(case, pairs, case.reference(cupy, first, pairs[0][0]), size, repeats)
    entries = [(case.manifest.ceiling.id, "ceiling", case.manifest.ceiling)]
    entries += [(s.id, "stage", s) for s in case.manifest.stages[3:]] + [(v.id, "variant", v) for v in variants]
    rows = hb._timed_all(t, [(name, kind, hb._stage_fn(k, st, size), "") for name, kind, st in entries])
    base = rows[0].tflops
    for r in rows:
        print(f"{r.name:<30} {r.kind:<8} {r.median_us:9.1f} us  {r.p10_us:9.1f}-{r.p90_us:9.1f}  "
              f"{r.tflops:7.1f} TFLOP/s "
              f"{100 * r.tflops / base:6.1f}%  {r.note}")


def gemm(repeats: int) -> None:
    case = get_case("gemm")
    size = {"m": 4096, "n": 4096, "k": 4096}
    last = case.manifest.stages[-1]
    variants = [replace(last, id=f"{last.id} [{','.join(map(str, s))}]", targs=tuple(map(str, s))) for s in GEMM_SHAPES]
    module, names = compile_module(case, "float32", extra=tuple(variants))
    k = Kernels(module, names, "float32", case)
    t = gb._Timing(import_cupy(), case, gb._pairs(case, size, 2), size, repeats, 3)
    rows = [gb._timed(t, case.manifest.ceiling.id, "ceiling", gb._stage_fn(k, case.manifest.ceiling, size))]
    rows += [gb._timed(t, v.id, "config", gb._stage_fn(k, v, size)) for v in variants]
    for r in rows:
        print(f"{r.name:<45} {r.median_us:9.1f} us  {r.p10_us:9.1f}-{r.p90_us:9.1f}  {r.tflops:6.2f} TFLOP/s "
              f"{100 * r.tflops / rows[0].tflops:6.1f}%  {r.note}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()
    hgemm(args.repeats)
    gemm(args.repeats)
