"""The bf16 GEMM's benchmark: every stage against cuBLAS (the ceiling, through ``torch.matmul``)
and the peers (``torch.compile`` of the same matmul, a Triton matmul), all event-timed the same
way in the same process (CUDA events, the launches queued behind a hold). GPU only. Work counted:
2 M N K flops; TFLOP/s = that over the median time.

Every row is checked first (random input, poisoned output, the case's float64 reference and
bound): a wrong one is reported WRONG, never timed. bf16 reductions in reduced precision are
switched off for torch (``allow_bf16_reduced_precision_reduction = False``): every entry
accumulates in float32. Rows, table and JSON are the fp32 GEMM's (:mod:`..gemm.bench`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from profiler_report.cases.gemm.bench import HARNESS, BenchRow, as_json, check_output, table  # noqa: F401 (the harness interface)
from profiler_report.cases.hgemm import views
from profiler_report.live.bench import PeerUnavailable, import_peer
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import event_times_us, import_cupy, interleaved_times_us
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case, Size
from profiler_report.model.manifest import Stage

#: fn(src, dst): C = A B^T from the input buffer into dst (M * N bf16 words).
Fn = Callable[[Any, Any], None]
DTYPE = "bfloat16"


def _row(case: Case, name: str, kind: str, us: list[float] | None, size: Size, timing: str,
         note: str = "") -> BenchRow:
    text = case.size_text(size)
    if not us:
        nan = float("nan")
        return BenchRow(name, kind, text, DTYPE, nan, nan, nan, nan, nan, nan, timing, note)
    work = case.work(case.manifest.stages[0], size, DTYPE)
    med, q = statistics.median(us), statistics.quantiles(us, n=10)
    return BenchRow(name, kind, text, DTYPE, med, q[0], q[-1], work.flops / (med * 1e6), work.bytes_moved / (med * 1e3),
                    float("nan"), timing, note)


@dataclass(frozen=True)
class _Timing:
    """How one size's entries are timed: the case, its input pairs at ``size``, the reference of the
    first pair's input (every entry is checked on it), ``repeats`` event-timed calls each."""

    case: Case
    pairs: list[tuple[Any, Any]]
    ref: Any
    size: Size
    repeats: int


def _checked(t: _Timing, entry: tuple[str, str, Fn, str]) -> BenchRow | None:
    """None when ``entry`` = (name, kind, fn, note) computes C within the bound; else its row: a
    wrong one gets NaN and a WRONG note, a raising one "failed"."""
    name, kind, fn, _ = entry
    try:
        bad = check_output(import_cupy(), t.case, fn, t.pairs[0], t.ref)
    except Exception as exc:  # a peer library failing must not stop the benchmark
        return _failed(t, entry, exc)
    return _row(t.case, name, kind, None, t.size, "cuda-events", "WRONG: " + bad) if bad else None


def _failed(t: _Timing, entry: tuple[str, str, Fn, str], exc: Exception) -> BenchRow:
    return _row(t.case, entry[0], entry[1], None, t.size, "failed",
                f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}")


def _timed_all(t: _Timing, entries: list[tuple[str, str, Fn, str]]) -> list[BenchRow]:
    """Every entry checked, then the right ones event-timed taking turns in rounds
    (:func:`~profiler_report.live.gpu.interleaved_times_us`: tensor-core clocks follow power, so
    entries timed one after the other would each see another clock); rows in ``entries``' order.
    Should the timing raise (a peer failing mid-run), each right entry is timed alone instead."""
    rows: dict[int, BenchRow] = {}
    for i, e in enumerate(entries):
        bad = _checked(t, e)
        if bad is not None:
            rows[i] = bad
    right = [i for i in range(len(entries)) if i not in rows]
    times: list[list[float] | None]
    try:
        times = list(interleaved_times_us([(entries[i][2], t.pairs) for i in right], t.repeats, 3))
    except Exception:  # noqa: BLE001 (one failing entry must not lose the others' times)
        times = [None] * len(right)
    for i, us in zip(right, times, strict=True):
        name, kind, fn, note = entries[i]
        if us is None:
            try:
                us = event_times_us(fn, t.pairs, t.repeats, 3)
            except Exception as exc:
                rows[i] = _failed(t, entries[i], exc)
                continue
        rows[i] = _row(t.case, name, kind, us, t.size, "cuda-events", note)
    return [rows[i] for i in range(len(entries))]


def _stage_fn(k: Kernels, st: Stage, size: Size) -> Fn:
    def fn(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, size)
    return fn


def bench_size(case: Case, size: Size, *, repeats: int = 20, buffers: int = 2, with_peers: bool = True,
               stages: list[Stage] | None = None) -> list[BenchRow]:
    """cuBLAS (the ceiling), the stages and (optionally) the peers at one size."""
    cupy = import_cupy()
    module, names = compile_module(case, DTYPE)
    k = Kernels(module, names, DTYPE, case)
    first = case.manifest.stages[0]
    pairs = [(case.make_input(cupy, size, DTYPE, seed=i + 1), case.make_output(cupy, first, size, DTYPE))
             for i in range(buffers)]
    t = _Timing(case, pairs, case.reference(cupy, first, pairs[0][0]), size, repeats)
    ceiling = case.manifest.ceiling
    entries = [(ceiling.id, "ceiling", _stage_fn(k, ceiling, size), "cuBLAS bf16 through torch.matmul, float32 "
                "accumulation")]
    entries += [(s.id, "stage", _stage_fn(k, s, size), "") for s in (stages or case.manifest.stages)]
    skipped = []
    if with_peers:
        for name, (fn, note) in peers(size).items():
            if fn is None:
                skipped.append(_row(case, name, "peer", None, size, "skipped", note))
            else:
                entries.append((name, "peer", fn, note))
    out = _timed_all(t, entries) + skipped
    base = next((r.tflops for r in out if r.kind == "ceiling"), float("nan"))
    for r in out:
        r.pct_of_ceiling = 100 * r.tflops / base
    return out


def peers(size: Size) -> dict[str, tuple[Fn | None, str]]:
    """name -> (fn(src, dst), note); fn None (and the note saying why) when the peer cannot run here."""
    m, n, k = size["m"], size["n"], size["k"]
    try:
        torch = import_peer("torch")
    except PeerUnavailable as exc:
        return {"torch.compile": (None, str(exc)), "triton matmul": (None, str(exc))}
    from profiler_report.util.tensors import as_tensor

    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

    def tensors(src: Any, dst: Any) -> tuple[Any, Any, Any]:
        a, b = views(src, m, n, k)
        return (as_tensor(a, DTYPE)[:, :k], as_tensor(b, DTYPE)[:, :k], as_tensor(dst.reshape(m, n), DTYPE))

    compiled = torch.compile(lambda a, b: torch.matmul(a, b.t()))

    def with_compile(src: Any, dst: Any) -> None:
        a, b, c = tensors(src, dst)
        c.copy_(compiled(a, b))

    out: dict[str, tuple[Fn | None, str]] = {
        "torch.compile": (with_compile, "torch.compile of torch.matmul(A, B^T) (default mode), plus a copy into C"),
    }
    try:
        from profiler_report.cases.hgemm.triton_peer import triton_matmul

        out["triton matmul"] = (triton_matmul(tensors), "tl.dot on bf16 tiles, float32 accumulator, autotuned over "
                                                        "three tile shapes during the warm-up")
    except PeerUnavailable as exc:
        out["triton matmul"] = (None, str(exc))
    return out


#: Sizes of the full sweep beyond the headline: odd (no tile multiple), smaller, square.
SWEEP_SIZES = ((4095, 4097, 1000), (2048, 2048, 2048), (4096, 4096, 4096))
HEAD = (("m", 8192), ("n", 8192), ("k", 8192))


def sweep_points(case: Case, ref: str, *, quick: bool = False, repeats: int = 20) -> list[SweepPoint]:
    """The headline (8192^3) with peers; then (not ``quick``) the other sizes."""
    points = [SweepPoint(ref, "size", HEAD, DTYPE, repeats=repeats)]
    if quick:
        return points
    return points + [SweepPoint(ref, "size", (("m", m), ("n", n), ("k", k)), DTYPE, repeats=repeats)
                     for m, n, k in SWEEP_SIZES]


def bench_point(case: Case, point: SweepPoint) -> list[BenchRow]:
    """One work unit of :func:`sweep_points` on this process's GPU."""
    size = {d: point.dims[d] for d in ("m", "n", "k")}
    return bench_size(case, size, repeats=point.repeats, with_peers=point.peers)


def run_all(case: Case, *, quick: bool = False, repeats: int = 20) -> list[BenchRow]:
    """The whole benchmark in-process: every point of :func:`sweep_points`, in order."""
    return [row for p in sweep_points(case, case.name, quick=quick, repeats=repeats) for row in bench_point(case, p)]


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against cuBLAS and the peers at the run's size (``run --peers``): bench.json's content."""
    return as_json(bench_size(case, size, repeats=repeats, stages=stages), provenance)
