"""The transpose's benchmark: every stage against memcpy, copy kernels at 4, 8 and 16 bytes per
access and the peer libraries (:mod:`.peers`), a block-shape sweep of ``vec_tuned``, the
configuration candidates of ``vec_realigned`` and the choice among them, and a sweep over sizes
and dtypes. The timing, the checks' poisoning, the peer loop, the table and the JSON are
:mod:`profiler_report.live.bench`'s. GPU only."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from profiler_report.analysis.ceilings import point_ceiling
from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.cases.transpose.configs import CONFIG_LAUNCH, config_stages, shape_stages
from profiler_report.cases.transpose.launch import tuned_shape
from profiler_report.cases.transpose.peers import PEERS, bits_equal
from profiler_report.live.bench import (
    BenchRow,
    Fn,
    Harness,
    Point,
    checked_output,
    choice_record,
    choose_config,
    relative_to,
)
from profiler_report.live.bench import warm_peers as warm
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import device_info, import_cupy
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE


@dataclass
class TransposeRow(BenchRow):
    """A bench row of the transpose (dims rows and cols; % of memcpy): with, for the block-shape
    sweep (kind "shape") and the configuration candidates (kind "config", :mod:`.configs`), the tile in elements
    (rows x cols of the input) and micro-blocks per thread; the ceiling the row's point is judged
    against (:func:`judge_against_ceiling`: "memcpy" at DRAM points, "L2 ceiling: <fastest copy>"
    at L2-resident ones) and GB/s as a % of it; and the configuration that ran ([micro-block rows,
    cols, threads]) where the sweep chose it per point (see :func:`choose_config`)."""

    PCT_KEY = "pct_of_memcpy"
    DIMS = ("rows", "cols")

    tile: str = ""
    per_thread: int = 0
    ceiling: str = ""
    pct_of_point_ceiling: float = float("nan")
    config: str = ""


HARNESS = Harness(TransposeRow)


#: Copy kernels beside the stages (ceilings): 4-, 8- and 16-byte accesses, each with 16 bytes in
#: flight per thread (4, 2 and 1 accesses), one pass over the matrix.
COPIES = tuple(Stage(f"copy {w}B x{u}", "copy_wide", f"{w}-byte copy, {u} per thread", launch="copy_wide",
                     op="copy", targs=(word, str(u)))
               for w, word, u in ((4, "unsigned int", 4), (8, "uint2", 2), (16, "uint4", 1)))


def judge_against_ceiling(rows: list[TransposeRow]) -> None:
    """Set ``ceiling`` and ``pct_of_point_ceiling`` on the rows of one point (one size and dtype):
    :func:`~profiler_report.analysis.ceilings.point_ceiling` (memcpy at DRAM points, the fastest
    same-size copy at L2-resident ones)."""
    found = point_ceiling(r.to_dict() for r in rows)
    if found is None:
        return
    label, gbps = found
    for r in rows:
        r.ceiling, r.pct_of_point_ceiling = label, 100 * r.gbps / gbps


def flag_faster_than_memcpy(rows: list[BenchRow]) -> None:
    """At a DRAM point, note every row faster than memcpy beyond the spread (its p90 below memcpy's
    p10): a transpose cannot move DRAM bytes faster than a copy, so its timing or output is suspect."""
    memcpy = next((r for r in rows if r.name == "memcpy"), None)
    if memcpy is None or memcpy.resident != "DRAM":
        return
    for r in rows:
        if r is not memcpy and r.kind in ("stage", "peer", "config") and slower_beyond_spread(memcpy.p10_us, r.p90_us):
            r.note = "; ".join(x for x in (r.note, "SUSPECT: faster than memcpy beyond the spread at a DRAM size")
                               if x)


def check(point: Point, fn: Fn, stage: Stage | None) -> str:
    """'' when ``fn`` writes (or returns) the exact transpose of the point's first input (its copy
    for a copy kernel), bit for bit, else what is wrong."""
    cupy = point.cupy
    got, src = checked_output(cupy, fn, point.pairs)
    if got is not point.pairs[0][1]:  # a peer's own result array, of any DLPack library
        got = cupy.ascontiguousarray(cupy.from_dlpack(got))
    ref = src if stage is not None and stage.op == "copy" else cupy.ascontiguousarray(src.T)
    return "" if bits_equal(cupy, got.reshape(ref.shape), ref) else "output differs from the reference"


#: Seconds of SM work before a point's first timing. In the sweep of 2026-12-01 the three float16
#: points timed right after a 26-second torch.compile build ran every SM kernel at 55-82 % of
#: memcpy (the copy kernels, which reach 100 % elsewhere, at 57-75 %) while memcpy itself kept its
#: speed: the SM clock had dropped while the GPU sat idle, and a few warm-up launches are too short
#: for it to ramp back. With this, two later sweeps had those points back at 93-99 % but for
#: the 64 MB ones, launches of 19 us timed at 40-60 us: those were host-paced (the GPU idle
#: between the start event and the launch), which the held timing of event_times_us removed.
CLOCK_WARMUP_S = 0.3


def warm_sm_clocks(cupy: Any, pairs: list[tuple[Any, Any]], seconds: float = CLOCK_WARMUP_S) -> None:
    """Keep the SMs busy for ``seconds`` (element-wise copies between the first pair's buffers,
    which every timed call overwrites anyway) so that timing starts at the running clock."""
    src, dst = pairs[0]
    flat_src, flat_dst = src.reshape(-1), dst.reshape(-1)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(8):
            flat_dst[...] = flat_src
        cupy.cuda.runtime.deviceSynchronize()


def _point(case: Case, rows: int, cols: int, dtype: str, repeats: int, warmup: int, buffers: int) -> Point:
    """The timing context of one size: its pairs (the SM clocks warmed on them), its bytes (read
    and written), the bit-exact check, and a clock warm-up after a peer that built a kernel."""
    cupy = import_cupy()
    pairs = make_pairs(case, cupy, rows, cols, dtype, buffers)
    warm_sm_clocks(cupy, pairs)
    nbytes = 2 * rows * cols * ITEMSIZE[dtype]
    return Point(cupy, TransposeRow, {"rows": rows, "cols": cols}, dtype, pairs, nbytes, device_info()["l2_bytes"],
                 check, repeats, warmup, after_slow_check=lambda: warm_sm_clocks(cupy, pairs))


def _kernel(point: Point, k: Kernels, name: str, kind: str, st: Stage) -> TransposeRow:
    def launch(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, point.dims)
    row = point.kernel(name, kind, launch, st)
    assert isinstance(row, TransposeRow)
    return row


@dataclass(frozen=True)
class SizeRun:
    """How :func:`bench_size` times one size: ``repeats`` timed and ``warmup`` untimed calls per
    entry over ``buffers`` input pairs; the peers or not; ``stages`` (default: the manifest's);
    ``options``: extra NVRTC options (an attempt such as ``-maxrregcount=32``) and ``suffix``
    appended to the stage names of such an attempt; ``configs``: time the ``vec_realigned`` stage at
    every :func:`config_stages` configuration and choose one (:func:`choose_config`)."""

    repeats: int = 30
    warmup: int = 5
    buffers: int = 3
    with_peers: bool = True
    stages: list[Stage] | None = None
    options: tuple[str, ...] = ()
    suffix: str = ""
    configs: bool = False


def bench_size(case: Case, rows: int, cols: int, dtype: str, **how: Any) -> list[BenchRow]:
    """Time memcpy, the copy kernels, the stages and (optionally) the peers at one size; ``how``:
    :class:`SizeRun`'s fields. With ``configs``, rows of kind "config" (one per candidate, the
    chosen one marked) and the ``vec_realigned`` stage row with the chosen configuration's timing
    (``config`` names it). Every row gets its point's ceiling (:func:`judge_against_ceiling`).
    """
    h = SizeRun(**how)
    stages, options, suffix, configs = h.stages, h.options, h.suffix, h.configs
    repeats, warmup, buffers, with_peers = h.repeats, h.warmup, h.buffers, h.with_peers
    candidates = config_stages(case, dtype) if configs else []
    module, names = compile_module(case, dtype, options, extra=COPIES + tuple(stages or ()) + tuple(candidates))
    k = Kernels(module, names, dtype, case)
    point = _point(case, rows, cols, dtype, repeats, warmup, buffers)
    out: list[BenchRow] = [point.memcpy()]
    entries: list[tuple[str, str, Stage]] = [("copy (4-byte tiled)", "ceiling", case.manifest.ceiling)]
    entries += [(c.id, "ceiling", c) for c in COPIES]
    entries += [(s.id + suffix, "stage", s) for s in (stages or case.manifest.stages)
                if not (candidates and s.launch == CONFIG_LAUNCH)]
    out += [_kernel(point, k, name, kind, st) for name, kind, st in entries]
    out += _config_rows(point, k, case, candidates)
    if with_peers:
        out += point.peers(PEERS)
    relative_to(out, out[0].gbps)
    judge_against_ceiling([r for r in out if isinstance(r, TransposeRow)])
    flag_faster_than_memcpy(out)
    return out


def _described(row: TransposeRow, st: Stage, v: int) -> TransposeRow:
    """``row`` with the tile (elements), threads and micro-blocks per thread of ``st``'s shape."""
    trc, tcc, nt = tuned_shape(st)
    row.tile, row.threads, row.per_thread = f"{trc * v}x{tcc * v}", nt, trc * tcc // nt
    return row


def _config_rows(point: Point, k: Kernels, case: Case, candidates: list[Stage]) -> list[TransposeRow]:
    """Rows of kind "config" (one per candidate, ``chosen`` on the one :func:`choose_config` keeps)
    and, after them, the stage row: the chosen candidate's timing under the stage's own name."""
    if not candidates:
        return []
    v = 16 // ITEMSIZE[k.dtype]
    out = []
    for st in candidates:
        row = _described(_kernel(point, k, st.id, "config", st), st, v)
        row.config = f"[{','.join(st.targs)}]"
        out.append(row)
    stage = next(s for s in case.manifest.stages if s.launch == CONFIG_LAUNCH)
    default = f"[{','.join(stage.targs)}]"
    chosen = choose_config(out, default)
    if chosen is None:  # every candidate wrong: the stage row says so, untimed
        return [*out, out[0].but(name=stage.id, kind="stage", config="", note=out[0].note)]
    chosen.chosen = True
    if chosen.config == default:
        how = "the manifest's default, the fastest or its median within the fastest's p10-p90"
    elif _timed(out, default):
        how = f"the fastest median; the default {default}'s median is above its p90"
    else:
        how = f"the fastest median; the default {default} did not run correctly"
    return [*out, chosen.but(name=stage.id, kind="stage", chosen=False,
                             note=f"configuration {chosen.config} chosen at this point: {how}")]


def config_candidates(case: Case, stage: Stage, dtype: str) -> list[Stage]:
    """``stage``'s candidate configurations for ``run`` (those the sweep times per point:
    :func:`config_stages`); [] for a stage whose configuration is not chosen per shape."""
    return config_stages(case, dtype) if stage.launch == CONFIG_LAUNCH else []


def run_choice(case: Case, size: dict[str, int], dtype: str, repeats: int, stage: Stage, warmup: int = 5,
               buffers: int = 3) -> dict[str, Any] | None:
    """``run``'s choice of ``stage``'s configuration at ``size``: the sweep's own rule, by the same
    function (:func:`_config_rows`, which calls :func:`choose_config`), at the same timing point
    (:func:`_point`: the same buffers after the same clock warm-up). A record (see
    :meth:`~profiler_report.model.base.Case.choose_configs`); None when no candidate ran correctly."""
    rows, cols = size["rows"], size["cols"]
    candidates = config_candidates(case, stage, dtype)
    module, names = compile_module(case, dtype, extra=tuple(candidates))
    k = Kernels(module, names, dtype, case)
    out = _config_rows(_point(case, rows, cols, dtype, repeats, warmup, buffers), k, case, candidates)
    timed = [r for r in out if r.kind == "config" and r.median_us == r.median_us]
    chosen = next((r for r in timed if r.chosen), None)
    return None if chosen is None else choice_record(stage, timed, chosen, size, dtype, out[-1].note)


def _timed(rows: list[TransposeRow], config: str) -> bool:
    return any(r.config == config and r.median_us == r.median_us for r in rows)


def bench_shapes(case: Case, rows: int, cols: int, dtype: str, *, repeats: int = 30, warmup: int = 5,
                 buffers: int = 3) -> list[BenchRow]:
    """The block-shape sweep: memcpy, then the ``vec_tuned`` stage at every tile shape of :data:`.configs.SHAPES`.

    Rows of kind "shape" carry the tile (input rows x cols, elements), threads per block, micro-blocks
    per thread and ``chosen`` (the shape stages.toml sets, the one the report profiles).
    """
    shapes = shape_stages(case, dtype)
    if not shapes:
        return []
    chosen = next(s for s in case.manifest.stages if s.launch == "vec_tuned").targs
    module, names = compile_module(case, dtype, extra=tuple(shapes))
    k = Kernels(module, names, dtype, case)
    point = _point(case, rows, cols, dtype, repeats, warmup, buffers)
    out: list[BenchRow] = [point.memcpy()]
    v = 16 // ITEMSIZE[dtype]
    for st in shapes:
        row = _described(_kernel(point, k, st.id, "shape", st), st, v)
        row.chosen = st.targs == chosen
        out.append(row)
    relative_to(out, out[0].gbps)
    return out


#: Sizes of the sweep: (rows, cols), each in float16, float32 and float64. L2-resident (the 60 MB
#: L2 of an H200 holds input + output of the first three in float16 and float32) to far past L2;
#: square, non-square, and rows or cols odd or prime (7919 and 7907 are primes). Whether a point is
#: L2 or DRAM comes from the GPU's L2 size (device_info), not from this list.
SWEEP_SIZES = ((1024, 1024), (1000, 3000), (2048, 2048), (4096, 4096), (8192, 2048), (2048, 8192),
               (8192, 4096), (8192, 8192), (8192, 16384), (16384, 16384), (4097, 8191), (8191, 8193),
               (12345, 6789), (7919, 7907))
#: The sizes and dtypes the block-shape sweep of vec_tuned runs at (the headline sizes).
HEADLINE = ((8192, 8192, "float32"), (16384, 16384, "float32"), (8192, 16384, "float16"), (8192, 4096, "float64"))
SWEEP_DTYPES = ("float16", "float32", "float64")


def sweep_points(case: Case, ref: str, *, quick: bool = False, repeats: int = 30) -> list[SweepPoint]:
    """The whole benchmark as work units: the block-shape sweep at the headline sizes, then every
    SWEEP_SIZES size in every dtype as a unit "sweep" point (every stage, every peer, vec_realigned at
    each candidate configuration), then attempts with other build options. ``ref`` is how a worker
    finds the case. ``quick``: 8192x8192 float32 only (stages and peers, and its shape sweep)."""
    def size(r: int, c: int) -> tuple[tuple[str, int], ...]:
        return (("rows", r), ("cols", c))

    if quick:
        return [SweepPoint(ref, "size", size(8192, 8192), "float32", repeats=repeats),
                SweepPoint(ref, "shapes", size(8192, 8192), "float32", repeats=repeats)]
    points = [SweepPoint(ref, "shapes", size(r, c), dt, repeats=repeats) for r, c, dt in HEADLINE]
    points += [SweepPoint(ref, "sweep", size(r, c), dt, repeats=repeats)
               for dt in SWEEP_DTYPES for r, c in SWEEP_SIZES]
    points += [SweepPoint(ref, "size", size(8192, 8192), "float32", stages="vec", options=(opt,), suffix=f" [{opt}]",
                          peers=False, repeats=repeats) for opt in ("-maxrregcount=32",)]
    return points


def bench_point(case: Case, point: SweepPoint) -> list[BenchRow]:
    """One work unit of :func:`sweep_points` on this process's GPU: "shapes" (the block-shape
    sweep), "sweep" (every stage and peer, vec_realigned's configuration chosen here) or "size"."""
    d = point.dims
    if point.unit == "shapes":
        return bench_shapes(case, d["rows"], d["cols"], point.dtype, repeats=point.repeats)
    stages = [s for s in case.manifest.stages if s.launch == point.stages] if point.stages else None
    return bench_size(case, d["rows"], d["cols"], point.dtype, repeats=point.repeats, with_peers=point.peers,
                      stages=stages, options=point.options, suffix=point.suffix, configs=point.unit == "sweep")


def run_all(case: Case, *, quick: bool = False, repeats: int = 30) -> list[BenchRow]:
    """The whole benchmark in-process: every point of :func:`sweep_points`, in order."""
    return [row for p in sweep_points(case, case.name, quick=quick, repeats=repeats) for row in bench_point(case, p)]


def make_pairs(case: Case, cupy: Any, rows: int, cols: int, dtype: str, buffers: int,
               shared_output: bool = True) -> list[tuple[Any, Any]]:
    """``buffers`` (input, output) pairs: distinct random inputs, rotated by the timing loop, and one
    ``cols x rows`` output that every pair writes (it also serves the copies: they write as many
    bytes). One output, because that is what the peers get: they allocate theirs, and their memory
    pools hand them the same block on every call, which at L2-resident sizes is still in L2. Timed
    with an output of their own per pair, memcpy, the copies and ``vec_tuned`` ran 4-25 % slower at
    the L2-resident points where torch.compile led, and no slower at 8192x8192 float32
    (lab/results/l2_output_reuse_run1.log). ``shared_output`` False gives each pair
    its own output (the rule before commit 2e8a4ca, kept by the experiments recorded with it)."""
    size = {"rows": rows, "cols": cols}
    out = cupy.empty((cols, rows), dtype=dtype)
    return [(case.make_input(cupy, size, dtype, seed=i + 1), out if shared_output else cupy.empty_like(out))
            for i in range(buffers)]


def warm_peers(case: Case, size: dict[str, int], dtype: str) -> None:
    """The peers built and run once at ``size`` and ``dtype``, untimed (:func:`.live.bench.warm_peers`),
    and the copy kernels of :func:`bench_size` compiled."""
    cupy = import_cupy()
    compile_module(case, dtype, extra=COPIES)
    src, dst = make_pairs(case, cupy, size["rows"], size["cols"], dtype, 1)[0]
    warm(cupy, PEERS, dtype, src, dst)


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against the peers at the run's size (``run --peers``): bench.json's content."""
    rows = bench_size(case, size["rows"], size["cols"], dtype, repeats=repeats, stages=stages)
    return HARNESS.as_json(rows, provenance)
