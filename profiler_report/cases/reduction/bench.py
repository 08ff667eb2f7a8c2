"""The reduction's benchmark: every stage against the read-ceiling kernel, cudaMemcpy and the
peer libraries (:mod:`.peers`); a block sweep of the last stage (threads per block x blocks) and
its verdict; a sweep over n (L2-resident to DRAM, non-powers of two) and dtypes. The timing, the
peer loop, the table and the JSON are :mod:`profiler_report.live.bench`'s. GPU only. Bytes
counted: n * 4 read."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.cases.reduction.peers import PEERS
from profiler_report.live.bench import BenchRow, Fn, Harness, Point, checked_output, relative_to
from profiler_report.live.bench import warm_peers as warm
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import device_info, import_cupy
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: Peers are checked against the float64 host sum to this relative error (their summation order
#: is theirs: no chain length to bound it by); int32 results exactly, modulo 2^32.
PEER_RTOL = 1e-4


@dataclass
class ReductionRow(BenchRow):
    """A bench row of the reduction (dims n; % of the read-ceiling kernel): with ``size`` ("n=N",
    the key the report's tables group by) and, for block-sweep rows (kind "config"), the blocks of
    the grid (``threads``: per block; ``chosen``: the manifest's configuration, the one profiled)."""

    PCT_KEY = "pct_of_ceiling"
    DIMS = ("n",)

    size: str = ""
    blocks: int = 0

    def __post_init__(self) -> None:
        self.size = self.size or f"n={self.dims['n']}"


def check(case: Case, point: Point, fn: Fn, stage: Stage | None) -> str:
    """'' when ``fn`` gives the right sum of the point's first input, else a message: a stage's
    against the case's comparison; a peer's (``stage`` None) against the host sum, within
    :data:`PEER_RTOL` (int32 exactly, modulo 2^32)."""
    import numpy as np

    cupy = point.cupy
    got, src = checked_output(cupy, fn, point.pairs)
    ref = case.reference(cupy, stage or case.manifest.stages[-1], src)
    if got is point.pairs[0][1]:
        res = case.compare(cupy, got, ref)
        return "" if res.ok else f"expected {res.expected}, got {res.got}"
    value = np.asarray(cupy.asnumpy(cupy.asarray(cupy.from_dlpack(got) if hasattr(got, "__dlpack__") else got)))
    value = value.reshape(-1)[0]
    if src.dtype == cupy.int32:
        ok = (int(value) - int(ref.value)) % 2**32 == 0
    else:
        ok = abs(float(value) - ref.value) <= PEER_RTOL * abs(ref.value)
    return "" if ok else f"expected {ref.value}, got {value}"


def _pairs(case: Case, n: int, dtype: str, buffers: int) -> list[tuple[Any, Any]]:
    cupy = import_cupy()
    first = case.manifest.stages[0]
    return [(case.make_input(cupy, {"n": n}, dtype, seed=i + 1), case.make_output(cupy, first, {"n": n}, dtype))
            for i in range(buffers)]


def _point(case: Case, n: int, dtype: str, repeats: int, warmup: int, buffers: int) -> Point:
    return Point(import_cupy(), ReductionRow, {"n": n}, dtype, _pairs(case, n, dtype, buffers), n * ITEMSIZE[dtype],
                 device_info()["l2_bytes"], lambda p, fn, st: check(case, p, fn, st), repeats, warmup)


def _kernel(point: Point, case: Case, k: Kernels, name: str, kind: str, st: Stage) -> ReductionRow:
    """One stage (every pass) checked against ``case`` (its grid may differ from the point's), then timed."""
    def launch(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, point.dims)
    row = replace(point, check=lambda p, fn, stage: check(case, p, fn, stage)).kernel(name, kind, launch, st)
    assert isinstance(row, ReductionRow)
    return row


def bench_size(case: Case, n: int, dtype: str, *, repeats: int = 30, warmup: int = 5, buffers: int = 3,
               with_peers: bool = True, stages: list[Stage] | None = None) -> list[BenchRow]:
    """memcpy, the read ceiling, the stages and (optionally) the peers at one n and dtype."""
    module, names = compile_module(case, dtype)
    k = Kernels(module, names, dtype, case)
    point = _point(case, n, dtype, repeats, warmup, buffers)
    copies = [(src, point.cupy.empty_like(src)) for src, _ in point.pairs]
    out: list[BenchRow] = [point.memcpy("cudaMemcpyAsync device-to-device: reads and writes n * 4 bytes; GB/s "
                                        "here counts the n * 4 bytes read", copies)]
    del copies
    out.append(_kernel(point, case, k, case.manifest.ceiling.id, "ceiling", case.manifest.ceiling))
    out += [_kernel(point, case, k, s.id, "stage", s) for s in (stages or case.manifest.stages)]
    if with_peers:
        out += point.peers(PEERS)
    _relative(out)
    return out


def _relative(rows: list[BenchRow]) -> None:
    relative_to(rows, next((r.gbps for r in rows if r.kind == "ceiling" and r.name != "memcpy"), float("nan")))


#: Block sweep of the last stage: threads per block x 16-byte loads in flight per thread (where
#: the kernel takes LOADS) x blocks of the grid (per SM). 128 threads measured slower at every
#: grid on the H200 (2026-12-01: 52-99 % of the read ceiling) and is left out.
THREADS = (256, 512, 1024)
LOADS = (2, 4, 8)
BLOCKS_PER_SM = (2, 4, 8)


def with_grid(case: Case, blocks: int) -> Case:
    """A copy of ``case`` whose grid-stride stages launch ``blocks`` blocks."""
    other = copy.copy(case)
    other.__dict__["manifest"] = replace(case.manifest, params={**case.manifest.params, "grid_blocks": blocks})
    return other


def bench_configs(case: Case, n: int, dtype: str, *, repeats: int = 30, warmup: int = 5,
                  buffers: int = 3) -> list[BenchRow]:
    """The last stage at every configuration of THREADS x LOADS x BLOCKS_PER_SM, the read ceiling
    first; ``chosen`` marks the manifest's configuration (the profiled one)."""
    info = device_info()
    last = case.manifest.stages[-1]
    loads = LOADS if len(last.targs) > 1 else (None,)
    variants = [replace(last, id=f"{last.id} [{t} threads" + (f", {d} loads" if d else "") + "]",
                        targs=(str(t), *((str(d),) if d else ())))
                for t in THREADS for d in loads]
    module, names = compile_module(case, dtype, extra=tuple(variants))
    point = _point(case, n, dtype, repeats, warmup, buffers)
    k = Kernels(module, names, dtype, case)
    out: list[BenchRow] = [_kernel(point, case, k, case.manifest.ceiling.id, "ceiling", case.manifest.ceiling)]
    chosen = (last.targs, int(case.manifest.params.get("grid_blocks", 0)))
    for per_sm in BLOCKS_PER_SM:
        blocks = per_sm * info["sm_count"]
        other = with_grid(case, blocks)
        k = Kernels(module, names, dtype, other)
        for st in variants:
            row = _kernel(point, other, k, f"{st.id[:-1]}, {per_sm}/SM]", "config", st)
            row.threads, row.blocks, row.chosen = int(st.targs[0]), blocks, (st.targs, blocks) == chosen
            out.append(row)
    _relative(out)
    return out


#: n of the sweep: L2-resident (4 and 32 MB), about the L2 (64 MB), DRAM, and not powers of two.
SWEEP_N = (2**20, 2**23, 2**24, 2**26, 100_000_007, 2**28 - 1, 2**28, 300_000_001)


def sweep_points(case: Case, ref: str, *, quick: bool = False, repeats: int = 30) -> list[SweepPoint]:
    """The whole benchmark as work units: headline (2^28 float32 and int32) with peers and the
    block sweep, then the n sweep. ``ref`` is how a worker finds the case."""
    points: list[SweepPoint] = []
    for dtype in ("float32",) if quick else ("float32", "int32"):
        points += [SweepPoint(ref, "size", (("n", 2**28),), dtype, repeats=repeats),
                   SweepPoint(ref, "configs", (("n", 2**28),), dtype, repeats=repeats)]
    if quick:
        return points
    return points + [SweepPoint(ref, "size", (("n", n),), dtype, repeats=repeats)
                     for dtype in ("float32", "int32") for n in SWEEP_N if n != 2**28]


def bench_point(case: Case, point: SweepPoint) -> list[BenchRow]:
    """One work unit of :func:`sweep_points` on this process's GPU."""
    n = point.dims["n"]
    if point.unit == "configs":
        return bench_configs(case, n, point.dtype, repeats=point.repeats)
    stages = [s for s in case.manifest.stages if s.launch == point.stages] if point.stages else None
    return bench_size(case, n, point.dtype, repeats=point.repeats, with_peers=point.peers, stages=stages)


def run_all(case: Case, *, quick: bool = False, repeats: int = 30) -> list[BenchRow]:
    """The whole benchmark in-process: every point of :func:`sweep_points`, in order."""
    return [row for p in sweep_points(case, case.name, quick=quick, repeats=repeats) for row in bench_point(case, p)]


def config_verdicts(rows: list[BenchRow]) -> list[str]:
    """Per n and dtype of the block sweep: the fastest configuration, and whether the chosen
    (profiled) one is slower beyond the run-to-run spread (its p10 above the fastest's p90)."""
    out = []
    for key in dict.fromkeys((r.dims["n"], r.dtype) for r in rows if r.kind == "config"):
        timed = [r for r in rows if r.kind == "config" and (r.dims["n"], r.dtype) == key and r.gbps == r.gbps]
        if not timed:
            continue
        best = max(timed, key=lambda r: r.gbps)
        chosen = next((r for r in timed if r.chosen), None)
        text = f"block sweep n={key[0]} {key[1]}: fastest {best.name} ({best.pct:.1f}% of the read ceiling)"
        if chosen is None:
            text += "; the chosen configuration was not swept"
        elif chosen is best:
            text += ", the chosen one"
        elif slower_beyond_spread(chosen.p10_us, best.p90_us):
            text += (f"; the chosen {chosen.name} ({chosen.pct:.1f}%) is slower beyond the spread: change "
                     "`template` / `grid_blocks` in kernels/reduction/stages.toml")
        else:
            text += f"; the chosen {chosen.name} ({chosen.pct:.1f}%) is within the spread of it"
        out.append(text)
    return out


def warm_peers(case: Case, size: dict[str, int], dtype: str) -> None:
    """The peers built and run once at ``size`` and ``dtype``, untimed (:func:`.live.bench.warm_peers`)."""
    src, dst = _pairs(case, size["n"], dtype, 1)[0]
    warm(import_cupy(), PEERS, dtype, src, dst)


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against the peers, and the block sweep, at the run's n (``run --peers``):
    bench.json's content."""
    n = size["n"]
    rows = bench_size(case, n, dtype, repeats=repeats, stages=stages)
    return HARNESS.as_json(rows + bench_configs(case, n, dtype, repeats=repeats), provenance)


HARNESS = Harness(ReductionRow, "% ceiling", "% of read ceiling", config_verdicts)
