"""vec_realigned against vec_peeled, memcpy and the peers at odd and aligned shapes (GPU).

Usage: python3 scripts/experiments/realigned.py OUT.json [--quick]
Every kernel is checked bit for bit (bench_size's check) before it is timed; the correctness
shapes run with a few repeats only.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace

from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose.launch import realigned_smem_bytes
from profiler_report.model.manifest import Stage
from profiler_report.model.registry import get_case

CONFIGS = ((32, 8, 256), (32, 16, 512), (32, 32, 1024))
CHECK = ((1, 1), (31, 65), (4097, 33), (33, 4097), (7, 5), (1009, 2003), (2003, 1009), (257, 129), (3, 1000),
         (133, 1000), (131, 999), (261, 37), (1, 4097), (4097, 1), (70, 70), (135, 263))
VARIANTS = ((8191, 8193), (12345, 6789), (8192, 8192))
TIMED = ((8191, 8193), (4097, 8191), (12345, 6789), (7919, 7907), (8192, 8192), (16384, 16384), (8192, 4096))


def realigned(*shape: int) -> Stage:
    """vec_realigned at ``shape``: [chunk rows, chunk columns, threads] and optionally tiles per block."""
    return Stage(f"vec_realigned [{','.join(map(str, shape))}]", "transpose_vec_realigned", "realigned",
                 launch="vec_realigned", targs=tuple(map(str, shape)))


def report(rows: list, got: list, r: int, c: int, dtype: str, out: str, kinds: tuple[str, ...] = ("stage",)) -> None:
    """Append one size's bench rows to ``rows``, print them (rows of ``kinds``) and rewrite ``out``."""
    rows += [dict(asdict(x), rows=r, cols=c, dtype=dtype) for x in got]
    print(f"{r}x{c} {dtype}: memcpy {got[0].gbps:.0f} GB/s", flush=True)
    for x in got:
        if x.kind in kinds:
            print(f"    {x.name:<40} {x.gbps:7.0f} {x.pct_of_memcpy:6.1f}% {x.note[:50]}", flush=True)
    json.dump(rows, open(out, "w"))


def main() -> None:
    out, quick = sys.argv[1], "--quick" in sys.argv
    case = get_case("transpose")
    peeled = next(s for s in case.manifest.stages if s.launch == "vec_peeled")
    tuned = next(s for s in case.manifest.stages if s.launch == "vec_tuned")
    rows = []
    for dtype in ("float32", "float64", "float16"):
        v = 16 // {"float16": 2, "float32": 4, "float64": 8}[dtype]
        cands = [realigned(*c) for c in CONFIGS if realigned_smem_bytes(c[0], c[1], v) <= bench.MAX_DYNAMIC_SMEM]
        stages = [tuned, replace(peeled, id="vec_peeled [32,16,512]")] + cands
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, dtype, repeats=5, warmup=1, buffers=1, with_peers=False, stages=stages)
            bad = [x.name for x in got if x.note.startswith("WRONG")]
            print(f"check {r}x{c} {dtype}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
        for r, c in TIMED[:3] if quick else TIMED:
            peers = (r, c) in ((8191, 8193), (16384, 16384))
            got = bench.bench_size(case, r, c, dtype, repeats=30, with_peers=peers, stages=stages)
            report(rows, got, r, c, dtype, out, ("stage", "peer"))
        for (r, c), t in [(sh, t) for sh in VARIANTS for t in (1536, 2048)]:
            got = bench.bench_size(case, r, c, dtype, repeats=30, with_peers=False, stages=cands[:2],
                                   options=(f"-DREALIGNED_MIN_THREADS={t}",), suffix=f" min {t} threads/SM")
            report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
