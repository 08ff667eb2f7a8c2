"""The GEMM's benchmark: every stage against cuBLAS SGEMM (the ceiling, through ``cupy.matmul``)
and the peer libraries (``torch.matmul``, ``torch.compile`` of it, a Triton matmul in IEEE
float32), all event-timed the same way in the same process; a tile-shape sweep of the warptile
stage. GPU only. Work counted: 2 M N K flops; TFLOP/s = that over the median time.

Every row is checked first (random input, poisoned output, the case's float64 reference and
gamma_K bound): a wrong one is reported WRONG, never timed. TF32 is switched off for every peer
(torch ``allow_tf32 = False``, Triton ``input_precision="ieee"``, ``CUPY_TF32`` refused): the case is
float32 on the CUDA cores, and the case's comparison marks a TF32 result WRONG (its rms check: the
worst-case bound alone cannot tell TF32 from float32 at large K).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.cases.gemm import views
from profiler_report.live.bench import choice_record, choose_config
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import event_times_us, import_cupy, poison
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case, Size
from profiler_report.model.manifest import Stage

#: fn(src, dst): C = A B from the input buffer into dst (M * N float32).
Fn = Callable[[Any, Any], None]


@dataclass
class BenchRow:
    """One timed entry: a stage, the ceiling, a peer or a tile-shape point, at one size."""

    name: str
    kind: str  # "stage", "ceiling", "peer" or "config"
    size: str  # "4096x4096x4096", the key the report's tables group by
    dtype: str
    median_us: float
    p10_us: float
    p90_us: float
    tflops: float
    gbps: float  # (M K + K N + M N) * 4 bytes over the median: the work model, not DRAM traffic
    pct_of_ceiling: float  # % of cuBLAS's TFLOP/s at the same size
    timing: str  # "cuda-events", "skipped", "failed"
    note: str = ""
    config: str = ""  # config rows: the warptile template
    chosen: bool = False  # config rows: the manifest's shape (the one profiled)
    host: str = ""
    gpu_index: str = ""
    gpu_uuid: str = ""
    gpu_name: str = ""
    gpu_driver: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The row as bench.json holds it."""
        return asdict(self)


def _row(case: Case, name: str, kind: str, us: list[float] | None, size: Size, timing: str,
         note: str = "") -> BenchRow:
    text = case.size_text(size)
    if not us:
        nan = float("nan")
        return BenchRow(name, kind, text, "float32", nan, nan, nan, nan, nan, nan, timing, note)
    work = case.work(case.manifest.stages[0], size, "float32")
    med, q = statistics.median(us), statistics.quantiles(us, n=10)
    return BenchRow(name, kind, text, "float32", med, q[0], q[-1], work.flops / (med * 1e6),
                    work.bytes_moved / (med * 1e3), float("nan"), timing, note)


def _check(cupy: Any, case: Case, fn: Fn, pairs: list[tuple[Any, Any]]) -> str:
    """'' when ``fn`` computes C within the case's bound on the first pair, else a message."""
    return check_output(cupy, case, fn, pairs[0], case.reference(cupy, case.manifest.stages[0], pairs[0][0]))


def check_output(cupy: Any, case: Case, fn: Fn, pair: tuple[Any, Any], ref: Any) -> str:
    """'' when ``fn`` computes C within the case's bound on ``pair`` (its output poisoned first;
    ``ref``: the case's reference of the pair's input), else a message naming the first wrong
    element (the bf16 GEMM's benchmark checks its entries the same way)."""
    src, dst = pair
    poison(cupy, dst)
    fn(src, dst)
    cupy.cuda.runtime.deviceSynchronize()
    got = case.compare(cupy, dst, ref)
    if got.ok:
        return ""
    return (f"{got.mismatches} elements outside the bound, first at {got.first_wrong}: expected {got.expected}, "
            f"got {got.got}")


@dataclass(frozen=True)
class _Timing:
    """How one size's entries are timed: the case, its input pairs at ``size``, ``repeats`` timed
    and ``warmup`` untimed calls each."""

    cupy: Any
    case: Case
    pairs: list[tuple[Any, Any]]
    size: Size
    repeats: int
    warmup: int


def _timed(t: _Timing, name: str, kind: str, fn: Fn, note: str = "") -> BenchRow:
    """``fn`` checked, then event-timed; a wrong one gets NaN and a WRONG note, a raising one "failed"."""
    case, size = t.case, t.size
    try:
        bad = _check(t.cupy, case, fn, t.pairs)
        if bad:
            return _row(case, name, kind, None, size, "cuda-events", "WRONG: " + bad)
        return _row(case, name, kind, event_times_us(fn, t.pairs, t.repeats, t.warmup), size, "cuda-events", note)
    except Exception as exc:  # a peer library failing must not stop the benchmark
        return _row(case, name, kind, None, size, "failed", f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}")


def _pairs(case: Case, size: Size, buffers: int) -> list[tuple[Any, Any]]:
    cupy = import_cupy()
    first = case.manifest.stages[0]
    return [(case.make_input(cupy, size, "float32", seed=i + 1), case.make_output(cupy, first, size, "float32"))
            for i in range(buffers)]


def _stage_fn(k: Kernels, st: Stage, size: Size) -> Fn:
    def fn(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, size)
    return fn


def bench_size(case: Case, size: Size, *, repeats: int = 20, warmup: int = 3, buffers: int = 2,
               with_peers: bool = True, stages: list[Stage] | None = None) -> list[BenchRow]:
    """cuBLAS (the ceiling), the stages and (optionally) the peers at one size."""
    cupy = import_cupy()
    module, names = compile_module(case, "float32")
    k = Kernels(module, names, "float32", case)
    t = _Timing(cupy, case, _pairs(case, size, buffers), size, repeats, warmup)
    ceiling = case.manifest.ceiling
    out = [_timed(t, ceiling.id, "ceiling", _stage_fn(k, ceiling, size), "cuBLAS SGEMM, float32 (CUPY_TF32 unset)")]
    out += [_timed(t, s.id, "stage", _stage_fn(k, s, size)) for s in (stages or case.manifest.stages)]
    if with_peers:
        for name, (fn, note) in peers(size).items():
            if fn is None:
                out.append(_row(case, name, "peer", None, size, "skipped", note))
            else:
                out.append(_timed(t, name, "peer", fn, note))
    _relative(out)
    return out


def _relative(rows: list[BenchRow]) -> None:
    base = next((r.tflops for r in rows if r.kind == "ceiling"), float("nan"))
    for r in rows:
        r.pct_of_ceiling = 100 * r.tflops / base


def peers(size: Size) -> dict[str, tuple[Fn | None, str]]:
    """name -> (fn(src, dst), note); fn None when the peer cannot run here."""
    m, n, k = size["m"], size["n"], size["k"]
    try:
        import torch
    except ImportError as exc:
        return {"torch.matmul": (None, f"torch not installed ({exc})")}
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 on the CUDA cores, as the stages

    def tensors(src: Any, dst: Any) -> tuple[Any, Any, Any]:
        a, b = views(src, m, n, k)
        return torch.from_dlpack(a), torch.from_dlpack(b), torch.from_dlpack(dst.reshape(m, n))

    def eager(src: Any, dst: Any) -> None:
        a, b, c = tensors(src, dst)
        torch.matmul(a, b, out=c)

    compiled = torch.compile(lambda a, b: torch.matmul(a, b))

    def with_compile(src: Any, dst: Any) -> None:
        a, b, c = tensors(src, dst)
        c.copy_(compiled(a, b))

    out: dict[str, tuple[Fn | None, str]] = {
        "torch.matmul": (eager, "cuBLAS through torch, allow_tf32 = False"),
        "torch.compile": (with_compile, "torch.compile of torch.matmul (default mode), plus a copy into C"),
    }
    out.update(_triton_peer(torch, tensors))
    return out


def _triton_peer(torch: Any, tensors: Callable[[Any, Any], tuple[Any, Any, Any]]) -> dict[str, tuple[Fn | None, str]]:
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        return {"triton matmul": (None, f"triton not installed ({exc})")}

    @triton.autotune(configs=[triton.Config({"BM": 128, "BN": 128}, num_warps=8, num_stages=3),
                              triton.Config({"BM": 128, "BN": 64}, num_warps=4, num_stages=4),
                              triton.Config({"BM": 64, "BN": 128}, num_warps=4, num_stages=4)],
                     key=["M", "N", "K"])
    @triton.jit
    def _mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr):  # noqa: N803
        BK: tl.constexpr = 32  # noqa: N806  (the same K step in every tile shape tried)
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
                        other=0.0)
            y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N),
                        other=0.0)
            acc = tl.dot(x, y, acc, input_precision="ieee")
        tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    def fn(src: Any, dst: Any) -> None:
        a, b, c = tensors(src, dst)
        m, k = a.shape
        n = b.shape[1]
        _mm[lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))](a, b, c, m, n, k)

    return {"triton matmul": (fn, "tl.dot with input_precision='ieee' (float32 FMA, no TF32), autotuned over "
                                  "three tile shapes during the warm-up")}


#: Tile shapes of the warptile sweep: [BM, BN, BK, WM, WN, WNITER, TM, TN, threads].
SHAPES = (
    (128, 128, 16, 64, 64, 4, 8, 4, 128),
    (128, 128, 8, 64, 64, 4, 8, 4, 128),
    (128, 128, 8, 64, 32, 2, 8, 4, 256),
    (128, 128, 16, 32, 64, 2, 8, 4, 256),
    (128, 128, 16, 64, 32, 2, 8, 4, 256),
    (128, 64, 16, 64, 32, 2, 8, 4, 128),
    (64, 128, 16, 32, 64, 2, 8, 4, 128),
    (256, 128, 8, 64, 64, 4, 8, 4, 256),
    (128, 256, 8, 64, 64, 4, 8, 4, 256),
    (128, 256, 8, 32, 128, 4, 8, 4, 256),
    (128, 256, 8, 64, 64, 2, 8, 8, 256),
    (256, 128, 8, 32, 128, 4, 8, 4, 256),
    (256, 128, 8, 64, 64, 2, 8, 8, 256),
)


def bench_configs(case: Case, size: Size, *, repeats: int = 20, warmup: int = 3, buffers: int = 2) -> list[BenchRow]:
    """The last stage at every shape of :data:`SHAPES`, cuBLAS first; ``chosen`` marks the
    manifest's shape (the profiled one)."""
    cupy = import_cupy()
    last = case.manifest.stages[-1]
    variants = [replace(last, id=f"{last.id} [{','.join(map(str, s))}]", targs=tuple(map(str, s))) for s in SHAPES]
    module, names = compile_module(case, "float32", extra=tuple(variants))
    k = Kernels(module, names, "float32", case)
    t = _Timing(cupy, case, _pairs(case, size, buffers), size, repeats, warmup)
    ceiling = case.manifest.ceiling
    out = [_timed(t, ceiling.id, "ceiling", _stage_fn(k, ceiling, size))]
    for st in variants:
        row = _timed(t, st.id, "config", _stage_fn(k, st, size))
        row.config, row.chosen = ",".join(st.targs), st.targs == last.targs
        out.append(row)
    _relative(out)
    return out


def config_candidates(case: Case, stage: Stage, dtype: str) -> list[Stage]:
    """The last stage's tile shapes for ``run`` to choose from per size: the manifest's shape and
    those of :data:`SHAPES`; [] for every other stage."""
    last = case.manifest.stages[-1]
    if stage.id != last.id:
        return []
    shapes = list(dict.fromkeys([tuple(stage.targs), *(tuple(map(str, s)) for s in SHAPES)]))
    return [replace(stage, id=f"{stage.id} [{','.join(s)}]", targs=s) for s in shapes]


def run_choice(case: Case, size: Size, dtype: str, repeats: int, stage: Stage, warmup: int = 3,
               buffers: int = 2) -> dict[str, Any] | None:
    """``run``'s choice of the warptile shape at ``size``: every candidate checked, then event-timed
    the way the shape sweep times it, and chosen by the sweeps' rule (:func:`choose_config`). A
    record (:func:`~profiler_report.live.bench.choice_record`); None when no candidate ran correctly."""
    candidates = config_candidates(case, stage, dtype)
    module, names = compile_module(case, dtype, extra=tuple(candidates))
    k = Kernels(module, names, dtype, case)
    t = _Timing(import_cupy(), case, _pairs(case, size, buffers), size, repeats, warmup)
    rows = [replace(_timed(t, st.id, "config", _stage_fn(k, st, size)), config=f"[{','.join(st.targs)}]")
            for st in candidates]
    chosen = choose_config(rows, f"[{','.join(stage.targs)}]")
    if chosen is None:
        return None
    timed = [r for r in rows if r.median_us == r.median_us]
    fastest = min(timed, key=lambda r: r.median_us)
    how = ("the fastest median" if chosen is fastest else
           f"the default {chosen.config}, within the run-to-run spread of the fastest {fastest.config}")
    return choice_record(stage, timed, chosen, size, dtype, how)


def _size(point: SweepPoint) -> Size:
    return {d: point.dims[d] for d in ("m", "n", "k")}


#: Sizes of the full sweep beyond the headline: small, odd (no tile multiple), large.
SWEEP_SIZES = ((1024, 1024, 1024), (2048, 2048, 2048), (4095, 4097, 1000), (8192, 8192, 8192))


def sweep_points(case: Case, ref: str, *, quick: bool = False, repeats: int = 20) -> list[SweepPoint]:
    """The headline (4096^3) with peers and the shape sweep; then (not ``quick``) the other sizes."""
    head = (("m", 4096), ("n", 4096), ("k", 4096))
    points = [SweepPoint(ref, "size", head, "float32", repeats=repeats),
              SweepPoint(ref, "configs", head, "float32", repeats=repeats)]
    if quick:
        return points
    return points + [SweepPoint(ref, "size", (("m", m), ("n", n), ("k", k)), "float32", repeats=repeats)
                     for m, n, k in SWEEP_SIZES]


def bench_point(case: Case, point: SweepPoint) -> list[BenchRow]:
    """One work unit of :func:`sweep_points` on this process's GPU."""
    if point.unit == "configs":
        return bench_configs(case, _size(point), repeats=point.repeats)
    return bench_size(case, _size(point), repeats=point.repeats, with_peers=point.peers)


def run_all(case: Case, *, quick: bool = False, repeats: int = 20) -> list[BenchRow]:
    """The whole benchmark in-process: every point of :func:`sweep_points`, in order."""
    return [row for p in sweep_points(case, case.name, quick=quick, repeats=repeats) for row in bench_point(case, p)]


def table(rows: list[BenchRow]) -> str:
    """Fixed-width text table: name, kind, size, median, p10-p90, TFLOP/s, % of cuBLAS, note; then
    the shape sweep's verdict."""
    lines = [f"{'name':<48} {'kind':<8} {'size':<15} {'median us':>10} {'p10-p90 us':>17} {'TFLOP/s':>8} "
             f"{'% cuBLAS':>8}  note"]
    for r in rows:
        mark = " (chosen)" if r.chosen else ""
        lines.append(f"{r.name + mark:<48} {r.kind:<8} {r.size:<15} {r.median_us:10.1f} "
                     f"{f'{r.p10_us:.1f}-{r.p90_us:.1f}':>17} {r.tflops:8.2f} {r.pct_of_ceiling:7.1f}%  {r.note}")
    return "\n".join(lines + config_verdicts(rows))


def config_verdicts(rows: list[BenchRow]) -> list[str]:
    """Per size of the shape sweep: the fastest shape, and whether the chosen one is slower beyond
    the run-to-run spread (its p10 above the fastest's p90)."""
    out = []
    for size in dict.fromkeys(r.size for r in rows if r.kind == "config"):
        timed = [r for r in rows if r.kind == "config" and r.size == size and r.tflops == r.tflops]
        if not timed:
            continue
        best = max(timed, key=lambda r: r.tflops)
        chosen = next((r for r in timed if r.chosen), None)
        text = f"shape sweep {size}: fastest {best.name} ({best.pct_of_ceiling:.1f}% of cuBLAS)"
        if chosen is None:
            text += "; the chosen shape was not swept"
        elif chosen is best:
            text += ", the chosen one"
        elif slower_beyond_spread(chosen.p10_us, best.p90_us):
            text += (f"; the chosen {chosen.name} ({chosen.pct_of_ceiling:.1f}%) is slower beyond the spread: change "
                     "`template` of the warptile stage in kernels/gemm/stages.toml")
        else:
            text += f"; the chosen {chosen.name} ({chosen.pct_of_ceiling:.1f}%) is within the spread of it"
        out.append(text)
    return out


def as_json(rows: list[BenchRow], provenance: dict[str, Any]) -> dict[str, Any]:
    return {"provenance": provenance, "pct_label": "% of cuBLAS", "work_unit": "TFLOP/s",
            "rows": [asdict(r) for r in rows]}


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against cuBLAS and the peers, and the shape sweep, at the run's size
    (``run --peers``): bench.json's content."""
    rows = bench_size(case, size, repeats=repeats, stages=stages)
    return as_json(rows + bench_configs(case, size, repeats=repeats), provenance)


class GemmHarness:
    """What the commands ask of a case's benchmark (the interface of
    :class:`~profiler_report.live.bench.Harness`: row type, rows back from their dicts, table,
    JSON) over this case's own rows, which are in TFLOP/s and % of cuBLAS, not GB/s and % of memcpy."""

    row_type = BenchRow

    def rows(self, dicts: list[dict[str, Any]]) -> list[BenchRow]:
        names = {f.name for f in fields(BenchRow)}
        return [BenchRow(**{k: v for k, v in d.items() if k in names}) for d in dicts]

    def table(self, rows: list[BenchRow]) -> str:
        return table(rows)

    def as_json(self, rows: list[BenchRow], provenance: dict[str, Any]) -> dict[str, Any]:
        return as_json(rows, provenance)


HARNESS = GemmHarness()

