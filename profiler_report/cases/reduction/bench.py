"""The reduction's benchmark: every stage against the read-ceiling kernel, cudaMemcpy and the
peer libraries (cupy.sum = CUB, torch.sum, a Triton reduction, jax.numpy.sum under jit); a
block sweep of the last stage (threads per block x blocks); a sweep over n (L2-resident to DRAM,
non-powers of two) and dtypes. GPU only. Bytes counted: n * 4 read."""

from __future__ import annotations

import copy
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import device_info, event_times_us, import_cupy, memcpy_fn, poison
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: fn(src, dst) -> the result (a 0-d or 1-element array of any library), or None when it wrote dst[0].
Fn = Callable[[Any, Any], Any]

#: Peers are checked against the float64 host sum to this relative error (their summation order
#: is theirs: no chain length to bound it by); int32 results exactly, modulo 2^32.
PEER_RTOL = 1e-4


@dataclass
class BenchRow:
    """One timed entry: a stage, a ceiling, a peer or a block-sweep point, at one n and dtype."""

    name: str
    kind: str  # "stage", "ceiling", "peer" or "config"
    n: int
    dtype: str
    median_us: float
    p10_us: float
    p90_us: float
    gbps: float
    pct_of_ceiling: float  # % of the read-ceiling kernel's GB/s at the same n and dtype
    timing: str  # "cuda-events", "wall-clock", "skipped", "failed"
    note: str = ""
    resident: str = ""  # "L2" when the input fits in L2, else "DRAM"
    size: str = ""  # "n=268435456", the key the report's tables group by
    threads: int = 0  # config rows: threads per block
    blocks: int = 0  # config rows: blocks of the grid
    chosen: bool = False  # config rows: the manifest's configuration (the one profiled)
    # Where the row's sweep point ran (live/fanout.py WHERE_FIELDS): host, GPU index, UUID, model, driver.
    host: str = ""
    gpu_index: str = ""
    gpu_uuid: str = ""
    gpu_name: str = ""
    gpu_driver: str = ""


def _row(name: str, kind: str, us: list[float] | None, n: int, dtype: str, timing: str, l2: int,
         note: str = "") -> BenchRow:
    nbytes = n * ITEMSIZE[dtype]
    where = "L2" if nbytes <= l2 else "DRAM"
    if not us:
        nan = float("nan")
        return BenchRow(name, kind, n, dtype, nan, nan, nan, nan, nan, timing, note, where, f"n={n}")
    med, q = statistics.median(us), statistics.quantiles(us, n=10)
    return BenchRow(name, kind, n, dtype, med, q[0], q[-1], nbytes / (med * 1e3), float("nan"), timing, note,
                    where, f"n={n}")


def _check(cupy: Any, case: Case, stage: Stage, fn: Fn, pairs: list[tuple[Any, Any]]) -> str:
    """'' when ``fn`` returns the right sum for the first pair, else a message."""
    import numpy as np

    src, dst = pairs[0]
    poison(cupy, dst)
    res = fn(src, dst)
    cupy.cuda.runtime.deviceSynchronize()
    ref = case.reference(cupy, stage, src)
    if res is None:
        got = case.compare(cupy, dst, ref)
        return "" if got.ok else f"expected {got.expected}, got {got.got}"
    value = np.asarray(cupy.asnumpy(cupy.asarray(cupy.from_dlpack(res) if hasattr(res, "__dlpack__") else res)))
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


def _kernel_row(cupy: Any, case: Case, k: Kernels, name: str, kind: str, st: Stage, pairs: list[tuple[Any, Any]],
                n: int, repeats: int, warmup: int, l2: int) -> BenchRow:
    """One stage (every pass) checked, then event-timed; a wrong one gets NaN and a WRONG note."""
    def fn(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, {"n": n})
    bad = _check(cupy, case, st, fn, pairs)
    if bad:
        return _row(name, kind, None, n, k.dtype, "cuda-events", l2, "WRONG: " + bad)
    return _row(name, kind, event_times_us(fn, pairs, repeats, warmup), n, k.dtype, "cuda-events", l2)


def bench_size(case: Case, n: int, dtype: str, *, repeats: int = 30, warmup: int = 5, buffers: int = 3,
               with_peers: bool = True, stages: list[Stage] | None = None) -> list[BenchRow]:
    """memcpy, the read ceiling, the stages and (optionally) the peers at one n and dtype."""
    cupy = import_cupy()
    l2 = device_info()["l2_bytes"]
    module, names = compile_module(case, dtype)
    k = Kernels(module, names, dtype, case)
    pairs = _pairs(case, n, dtype, buffers)
    copies = [(src, cupy.empty_like(src)) for src, _ in pairs]
    memcpy = _row("memcpy", "ceiling", event_times_us(memcpy_fn(cupy), copies, repeats, warmup), n, dtype,
                  "cuda-events", l2, "cudaMemcpyAsync device-to-device: reads and writes n * 4 bytes; GB/s "
                  "here counts the n * 4 bytes read")
    del copies
    out = [memcpy, _kernel_row(cupy, case, k, case.manifest.ceiling.id, "ceiling", case.manifest.ceiling, pairs, n,
                               repeats, warmup, l2)]
    out += [_kernel_row(cupy, case, k, s.id, "stage", s, pairs, n, repeats, warmup, l2)
            for s in (stages or case.manifest.stages)]
    if with_peers:
        out += _peer_rows(cupy, case, pairs, n, dtype, repeats, warmup, l2)
    _relative(out)
    return out


def _relative(rows: list[BenchRow]) -> None:
    base = next((r.gbps for r in rows if r.kind == "ceiling" and r.name != "memcpy"), float("nan"))
    for r in rows:
        r.pct_of_ceiling = 100 * r.gbps / base


def peers(cupy: Any, dtype: str) -> dict[str, tuple[Fn | None, str]]:
    """name -> (fn(src, dst) returning the sum, note); fn None when the peer cannot run here."""
    out: dict[str, tuple[Fn | None, str]] = {"cupy.sum": (lambda src, dst: cupy.sum(src), "CUB DeviceReduce")}
    try:
        import torch

        out["torch.sum"] = (lambda src, dst: torch.sum(torch.from_dlpack(src)),
                            "int32 sums in int64" if dtype == "int32" else "")
        out.update(_triton_peer(torch))
    except ImportError as exc:
        out["torch.sum"] = (None, f"torch not installed ({exc})")
    return out


def _triton_peer(torch: Any) -> dict[str, tuple[Fn | None, str]]:
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        return {"triton sum": (None, f"triton not installed ({exc})")}

    @triton.jit
    def _partial(x, partials, n, BLOCK: tl.constexpr):  # noqa: N803
        pid, nprog = tl.program_id(0), tl.num_programs(0)
        acc = tl.zeros((BLOCK,), dtype=x.dtype.element_ty)
        for start in range(pid * BLOCK, n, nprog * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.load(x + offs, mask=offs < n, other=0)
        tl.store(partials + pid, tl.sum(acc, axis=0))

    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def fn(src: Any, dst: Any) -> Any:
        x = torch.from_dlpack(src)
        grid = min(8 * sms, triton.cdiv(x.numel(), 4096))
        partials = torch.empty(grid, dtype=x.dtype, device=x.device)
        _partial[(grid,)](x, partials, x.numel(), BLOCK=4096, num_warps=8)
        return partials.sum()

    return {"triton sum": (fn, "persistent grid (8 programs per SM) of 4096-element tl.sum, then torch.sum of the "
                               "partials")}


def _peer_rows(cupy: Any, case: Case, pairs: list[tuple[Any, Any]], n: int, dtype: str, repeats: int, warmup: int,
               l2: int) -> list[BenchRow]:
    stage = case.manifest.stages[-1]
    out = []
    for name, (fn, note) in peers(cupy, dtype).items():
        if fn is None:
            out.append(_row(name, "peer", None, n, dtype, "skipped", l2, note))
            continue
        try:
            bad = _check(cupy, case, stage, fn, pairs)
            us = None if bad else event_times_us(fn, pairs, repeats, warmup)
            out.append(_row(name, "peer", us, n, dtype, "cuda-events", l2, ("WRONG: " + bad) if bad else note))
        except Exception as exc:  # a peer library failing must not stop the benchmark
            out.append(_row(name, "peer", None, n, dtype, "failed", l2, f"{type(exc).__name__}: {str(exc)[:160]}"))
    us, note = jax_time(cupy, case, stage, pairs[0][0], repeats)
    out.append(_row("jax.jit jnp.sum", "peer", us, n, dtype, "wall-clock" if us else "skipped", l2, note))
    return out


def jax_time(cupy: Any, case: Case, stage: Stage, src: Any, repeats: int) -> tuple[list[float] | None, str]:
    """Wall-clock microseconds of a jitted ``jnp.sum`` (block_until_ready), or (None, why)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        return None, f"jax not installed ({exc})"
    x = jnp.asarray(cupy.asnumpy(src))
    f = jax.jit(jnp.sum)
    value = f(x).block_until_ready()
    ref = case.reference(cupy, stage, src)
    if src.dtype == cupy.int32:
        ok = (int(value) - int(ref.value)) % 2**32 == 0
    else:
        ok = abs(float(value) - ref.value) <= PEER_RTOL * abs(ref.value)
    if not ok:
        return None, f"WRONG: expected {ref.value}, got {value}"
    us = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(x).block_until_ready()
        us.append((time.perf_counter() - t0) * 1e6)
    return sorted(us), "wall clock incl. dispatch"


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
    cupy = import_cupy()
    info = device_info()
    last = case.manifest.stages[-1]
    loads = LOADS if len(last.targs) > 1 else (None,)
    variants = [replace(last, id=f"{last.id} [{t} threads" + (f", {d} loads" if d else "") + "]",
                        targs=(str(t), *((str(d),) if d else ())))
                for t in THREADS for d in loads]
    module, names = compile_module(case, dtype, extra=tuple(variants))
    pairs = _pairs(case, n, dtype, buffers)
    k = Kernels(module, names, dtype, case)
    out = [_kernel_row(cupy, case, k, case.manifest.ceiling.id, "ceiling", case.manifest.ceiling, pairs, n,
                       repeats, warmup, info["l2_bytes"])]
    chosen = (last.targs, int(case.manifest.params.get("grid_blocks", 0)))
    for per_sm in BLOCKS_PER_SM:
        blocks = per_sm * info["sm_count"]
        other = with_grid(case, blocks)
        k = Kernels(module, names, dtype, other)
        for st in variants:
            row = _kernel_row(cupy, other, k, f"{st.id[:-1]}, {per_sm}/SM]", "config", st, pairs, n,
                              repeats, warmup, info["l2_bytes"])
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


def best_peer_gbps(rows: list[BenchRow]) -> dict[tuple[int, str], float]:
    """(n, dtype) -> GB/s of the fastest peer that ran correctly there."""
    best: dict[tuple[int, str], float] = {}
    for r in rows:
        if r.kind == "peer" and r.gbps == r.gbps:
            best[(r.n, r.dtype)] = max(best.get((r.n, r.dtype), 0.0), r.gbps)
    return best


def table(rows: list[BenchRow]) -> str:
    """Fixed-width text table: name, kind, n, dtype, where, median, p10-p90, GB/s, % of the read
    ceiling, and the ratio to the fastest peer at the same n and dtype."""
    best = best_peer_gbps(rows)
    lines = [f"{'name':<36} {'kind':<8} {'n':>11} {'dtype':<8} {'where':<5} {'median us':>10} {'p10-p90 us':>17} "
             f"{'GB/s':>8} {'% ceiling':>9} {'x best peer':>11}  note"]
    for r in rows:
        ratio = r.gbps / best.get((r.n, r.dtype), float("nan"))
        mark = " (chosen)" if r.chosen else ""
        lines.append(f"{r.name + mark:<36} {r.kind:<8} {r.n:>11} {r.dtype:<8} {r.resident:<5} {r.median_us:10.1f} "
                     f"{f'{r.p10_us:.1f}-{r.p90_us:.1f}':>17} {r.gbps:8.0f} {r.pct_of_ceiling:8.1f}% "
                     f"{ratio:10.3f}x  {r.note}")
    return "\n".join(lines + config_verdicts(rows))


def config_verdicts(rows: list[BenchRow]) -> list[str]:
    """Per n and dtype of the block sweep: the fastest configuration, and whether the chosen
    (profiled) one is slower beyond the run-to-run spread (its p10 above the fastest's p90)."""
    out = []
    for key in dict.fromkeys((r.n, r.dtype) for r in rows if r.kind == "config"):
        timed = [r for r in rows if r.kind == "config" and (r.n, r.dtype) == key and r.gbps == r.gbps]
        if not timed:
            continue
        best = max(timed, key=lambda r: r.gbps)
        chosen = next((r for r in timed if r.chosen), None)
        text = f"block sweep n={key[0]} {key[1]}: fastest {best.name} ({best.pct_of_ceiling:.1f}% of the read ceiling)"
        if chosen is None:
            text += "; the chosen configuration was not swept"
        elif chosen is best:
            text += ", the chosen one"
        elif slower_beyond_spread(chosen.p10_us, best.p90_us):
            text += (f"; the chosen {chosen.name} ({chosen.pct_of_ceiling:.1f}%) is slower beyond the spread: change "
                     "`template` / `grid_blocks` in kernels/reduction/stages.toml")
        else:
            text += f"; the chosen {chosen.name} ({chosen.pct_of_ceiling:.1f}%) is within the spread of it"
        out.append(text)
    return out


def as_json(rows: list[BenchRow], provenance: dict[str, Any]) -> dict[str, Any]:
    return {"provenance": provenance, "pct_label": "% of read ceiling", "rows": [asdict(r) for r in rows]}


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against the peers, and the block sweep, at the run's n (``run --peers``):
    bench.json's content."""
    n = size["n"]
    rows = bench_size(case, n, dtype, repeats=repeats, stages=stages)
    return as_json(rows + bench_configs(case, n, dtype, repeats=repeats), provenance)
