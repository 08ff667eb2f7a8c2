"""The transpose's benchmark: every stage against memcpy, copy kernels at 4, 8 and 16 bytes per
access and the peer libraries (cupy, cuBLAS geam, torch eager and compiled, Triton, JAX), a
block-shape sweep of the last stage, and a sweep over sizes and dtypes. GPU only."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from profiler_report.cases.base import Case
from profiler_report.cases.manifest import Stage
from profiler_report.cases.transpose.launch import tuned_shape
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import device_info, import_cupy, memcpy_fn, poison
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.util.dtypes import ITEMSIZE

#: fn(src, dst): writes the result into dst and returns None, or returns its own result array
#: (what peers like ``a.T.copy()`` do: they allocate; copying into dst would double their traffic).
Fn = Callable[[Any, Any], Any]


@dataclass
class BenchRow:
    """One timed entry: a stage, a ceiling or a peer, at one size and dtype."""

    name: str
    kind: str  # "stage", "ceiling" or "peer"
    rows: int
    cols: int
    dtype: str
    median_us: float
    p10_us: float
    p90_us: float
    gbps: float
    pct_of_memcpy: float
    timing: str  # "cuda-events" or "wall-clock"
    note: str = ""
    resident: str = ""  # "L2" when in + out fit in L2, else "DRAM"
    # Block-shape sweep rows (kind "shape"): the tile in elements (rows x cols of the input),
    # threads per block, micro-blocks per thread, and whether it is the manifest's (profiled) shape.
    tile: str = ""
    threads: int = 0
    per_thread: int = 0
    chosen: bool = False
    # Where the row's sweep point ran (live/fanout.py WHERE_FIELDS): host, GPU index, UUID, model, driver.
    host: str = ""
    gpu_index: str = ""
    gpu_uuid: str = ""
    gpu_name: str = ""
    gpu_driver: str = ""


def _bits_equal(cupy: Any, out: Any, ref: Any) -> bool:
    return bool(cupy.array_equal(out.view(f"u{out.dtype.itemsize}"), ref.view(f"u{ref.dtype.itemsize}")))


#: Copy kernels beside the stages (ceilings): 4-, 8- and 16-byte accesses, each with 16 bytes in
#: flight per thread (4, 2 and 1 accesses), one pass over the matrix.
COPIES = tuple(Stage(f"copy {w}B x{u}", "copy_wide", f"{w}-byte copy, {u} per thread", launch="copy_wide",
                     op="copy", targs=(word, str(u)))
               for w, word, u in ((4, "unsigned int", 4), (8, "uint2", 2), (16, "uint4", 1)))


#: Tile shapes of the block-shape sweep: (micro-block rows, micro-block columns, threads per block).
#: A micro-block is V x V elements (V = 16 / itemsize); each thread moves rows * cols / threads.
SHAPES = ((8, 8, 64), (8, 16, 128), (16, 8, 128), (16, 16, 128), (8, 32, 256), (32, 8, 256), (16, 16, 256),
          (16, 32, 256), (32, 16, 256), (32, 32, 256), (8, 64, 256), (16, 64, 256), (16, 32, 512),
          (32, 16, 512), (32, 32, 512), (64, 16, 512), (16, 64, 512), (64, 32, 512), (32, 64, 512))


#: Dynamic shared memory a block may opt in to on sm_90 (227 KB).
MAX_DYNAMIC_SMEM = 232448


def shape_stages(case: Case, dtype: str) -> list[Stage]:
    """The manifest's ``vec_tuned`` stage at every SHAPES entry whose tile fits in shared memory."""
    tuned = [s for s in case.manifest.stages if s.launch == "vec_tuned"]
    if not tuned:
        return []
    base, v = tuned[-1], 16 // ITEMSIZE[dtype]
    return [replace(base, id=f"{base.id} [{trc},{tcc},{nt}]", targs=(str(trc), str(tcc), str(nt)))
            for trc, tcc, nt in SHAPES if trc * tcc * v * 16 <= MAX_DYNAMIC_SMEM]


def check_output(cupy: Any, name: str, fn: Fn, pairs: list[tuple[Any, Any]], copy: bool = False) -> str:
    """'' when ``fn`` writes the exact transpose (or copy) of the first pair, else a message."""
    src, dst = pairs[0]
    poison(cupy, dst)
    res = fn(src, dst)
    cupy.cuda.runtime.deviceSynchronize()
    ref = src if copy else cupy.ascontiguousarray(src.T)
    got = dst if res is None else cupy.ascontiguousarray(cupy.from_dlpack(res))
    view = got.reshape(ref.shape)
    return "" if _bits_equal(cupy, view, ref) else f"{name}: output differs from the reference"


def event_time(cupy: Any, fn: Fn, pairs: list[tuple[Any, Any]], repeats: int, warmup: int) -> list[float]:
    """Microseconds of ``repeats`` event-timed calls, rotating buffer pairs."""
    for i in range(warmup):
        fn(*pairs[i % len(pairs)])
    cupy.cuda.runtime.deviceSynchronize()
    ev = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(repeats)]
    for i, (s, e) in enumerate(ev):
        src, dst = pairs[i % len(pairs)]
        s.record()
        fn(src, dst)
        e.record()
    ev[-1][1].synchronize()
    return [cupy.cuda.get_elapsed_time(s, e) * 1e3 for s, e in ev]


def _row(name: str, kind: str, us: list[float], rows: int, cols: int, dtype: str, timing: str,
         l2_bytes: int, note: str = "") -> BenchRow:
    med = statistics.median(us)
    q = statistics.quantiles(us, n=10)
    nbytes = 2 * rows * cols * ITEMSIZE[dtype]
    return BenchRow(name, kind, rows, cols, dtype, med, q[0], q[-1], nbytes / (med * 1e3), float("nan"),
                    timing, note, "L2" if nbytes <= l2_bytes else "DRAM")


def peers(cupy: Any, dtype: str) -> dict[str, tuple[Fn | None, str]]:
    """name -> (fn(src, dst), note); fn is None when the peer cannot run here (note says why)."""
    out: dict[str, tuple[Fn | None, str]] = {}

    out["cupy a.T.copy()"] = (lambda src, dst: src.T.copy(), "allocates its output (memory pool)")

    import cupy.cublas  # a submodule: not imported by `import cupy`

    def geam(src: Any, dst: Any) -> None:
        cupy.cublas.geam("T", "N", 1.0, src, 0.0, dst, out=dst)

    out["cupy.cublas.geam"] = (geam, "cuBLAS geam, C = op(A)") if dtype in ("float32", "float64") \
        else (None, "geam has no float16")
    try:
        import torch

        out["torch t().contiguous()"] = (lambda src, dst: torch.from_dlpack(src).t().contiguous(),
                                         "allocates its output (caching allocator)")
        compiled = torch.compile(lambda x: x.t().contiguous())
        out["torch.compile t().contiguous()"] = (lambda src, dst: compiled(torch.from_dlpack(src)),
                                                 "allocates its output (caching allocator)")
        out.update(_triton_peer(torch))
    except ImportError as exc:
        out["torch"] = (None, f"torch not installed ({exc})")
    return out


def _triton_peer(torch: Any) -> dict[str, tuple[Fn | None, str]]:
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        return {"triton transpose": (None, f"triton not installed ({exc})")}

    @triton.jit
    def _transpose(x, y, rows, cols, BM: tl.constexpr, BN: tl.constexpr):  # noqa: N803
        pm, pn = tl.program_id(0), tl.program_id(1)
        r = pm * BM + tl.arange(0, BM)
        c = pn * BN + tl.arange(0, BN)
        mask = (r[:, None] < rows) & (c[None, :] < cols)
        tile = tl.load(x + r[:, None] * cols + c[None, :], mask=mask)
        tl.store(y + c[None, :] * rows + r[:, None], tile, mask=mask)

    def fn(src: Any, dst: Any) -> None:
        x, y = torch.from_dlpack(src), torch.from_dlpack(dst)
        rows, cols = x.shape
        grid = (triton.cdiv(rows, 64), triton.cdiv(cols, 64))
        _transpose[grid](x, y, rows, cols, BM=64, BN=64)

    return {"triton transpose": (fn, "64x64 tiles, tl.load/tl.store")}


def jax_time(cupy: Any, src: Any, repeats: int) -> tuple[list[float] | None, str]:
    """Wall-clock microseconds of a jitted ``x.T`` (with block_until_ready), or (None, why)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        return None, f"jax not installed ({exc})"
    x = jnp.asarray(cupy.asnumpy(src))
    f = jax.jit(lambda a: a.T + jnp.zeros((), a.dtype))  # the add keeps XLA from returning a view
    y = f(x).block_until_ready()
    if not bool((jnp.asarray(y) == x.T).all()):
        return None, "jax output differs from the reference"
    us = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(x).block_until_ready()
        us.append((time.perf_counter() - t0) * 1e6)
    return us, "wall clock incl. dispatch; jit(x.T + 0)"


def bench_size(case: Case, rows: int, cols: int, dtype: str, *, repeats: int = 30, warmup: int = 5,
               buffers: int = 3, with_peers: bool = True, stages: list[Stage] | None = None,
               options: tuple[str, ...] = (), suffix: str = "") -> list[BenchRow]:
    """Time memcpy, the copy kernels, the stages and (optionally) the peers at one size.

    ``options`` are extra NVRTC options (an attempt such as ``-maxrregcount=32``); ``suffix``
    is appended to the stage names of such an attempt.
    """
    cupy = import_cupy()
    l2 = device_info()["l2_bytes"]
    module, names = compile_module(case, dtype, options, extra=COPIES + tuple(stages or ()))
    k = Kernels(module, names, dtype, case)
    pairs = make_pairs(case, cupy, rows, cols, dtype, buffers)
    rows_out = [_memcpy_row(cupy, pairs, rows, cols, dtype, repeats, warmup, l2)]
    entries: list[tuple[str, str, Stage]] = [("copy (4-byte tiled)", "ceiling", case.manifest.ceiling)]
    entries += [(c.id, "ceiling", c) for c in COPIES]
    entries += [(s.id + suffix, "stage", s) for s in (stages or case.manifest.stages)]
    rows_out += [_kernel_row(cupy, k, name, kind, st, pairs, rows, cols, repeats, warmup, l2)
                 for name, kind, st in entries]
    if with_peers:
        rows_out += _peer_rows(cupy, pairs, rows, cols, dtype, repeats, warmup, l2)
    base = rows_out[0].gbps
    for r in rows_out:
        r.pct_of_memcpy = 100 * r.gbps / base
    return rows_out


def _memcpy_row(cupy: Any, pairs: list[tuple[Any, Any]], rows: int, cols: int, dtype: str, repeats: int,
                warmup: int, l2: int) -> BenchRow:
    return _row("memcpy", "ceiling", event_time(cupy, memcpy_fn(cupy), pairs, repeats, warmup),
                rows, cols, dtype, "cuda-events", l2, "cudaMemcpyAsync device-to-device")


def _kernel_row(cupy: Any, k: Kernels, name: str, kind: str, st: Stage, pairs: list[tuple[Any, Any]],
                rows: int, cols: int, repeats: int, warmup: int, l2: int) -> BenchRow:
    """One kernel checked bit for bit, then event-timed; a wrong one gets NaN times and a WRONG note."""
    def fn(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, {"rows": rows, "cols": cols})
    bad = check_output(cupy, name, fn, pairs, copy=st.op == "copy")
    if bad:
        return _row(name, kind, [float("nan")] * 20, rows, cols, k.dtype, "cuda-events", l2, "WRONG: " + bad)
    return _row(name, kind, event_time(cupy, fn, pairs, repeats, warmup), rows, cols, k.dtype, "cuda-events", l2)


def bench_shapes(case: Case, rows: int, cols: int, dtype: str, *, repeats: int = 30, warmup: int = 5,
                 buffers: int = 3) -> list[BenchRow]:
    """The block-shape sweep: memcpy, then the ``vec_tuned`` stage at every tile shape of SHAPES.

    Rows of kind "shape" carry the tile (input rows x cols, elements), threads per block, micro-blocks
    per thread and ``chosen`` (the shape stages.toml sets, the one the report profiles).
    """
    cupy = import_cupy()
    l2 = device_info()["l2_bytes"]
    shapes = shape_stages(case, dtype)
    if not shapes:
        return []
    chosen = next(s for s in case.manifest.stages if s.launch == "vec_tuned").targs
    module, names = compile_module(case, dtype, extra=tuple(shapes))
    k = Kernels(module, names, dtype, case)
    pairs = make_pairs(case, cupy, rows, cols, dtype, buffers)
    out = [_memcpy_row(cupy, pairs, rows, cols, dtype, repeats, warmup, l2)]
    v = 16 // ITEMSIZE[dtype]
    for st in shapes:
        row = _kernel_row(cupy, k, st.id, "shape", st, pairs, rows, cols, repeats, warmup, l2)
        trc, tcc, nt = tuned_shape(st)
        row.tile, row.threads, row.per_thread = f"{trc * v}x{tcc * v}", nt, trc * tcc // nt
        row.chosen = st.targs == chosen
        out.append(row)
    for r in out:
        r.pct_of_memcpy = 100 * r.gbps / out[0].gbps
    return out


def _peer_rows(cupy: Any, pairs: list[tuple[Any, Any]], rows: int, cols: int, dtype: str, repeats: int,
               warmup: int, l2: int) -> list[BenchRow]:
    out = []
    for name, (fn, note) in peers(cupy, dtype).items():
        if fn is None:
            out.append(_row(name, "peer", [float("nan")] * 20, rows, cols, dtype, "skipped", l2, note))
            continue
        try:
            bad = check_output(cupy, name, fn, pairs)
            us = [float("nan")] * 20 if bad else event_time(cupy, fn, pairs, repeats, warmup)
            out.append(_row(name, "peer", us, rows, cols, dtype, "cuda-events", l2, bad or note))
        except Exception as exc:  # a peer library failing must not stop the benchmark
            out.append(_row(name, "peer", [float("nan")] * 20, rows, cols, dtype, "failed", l2,
                            f"{type(exc).__name__}: {str(exc)[:160]}"))
    us, note = jax_time(cupy, pairs[0][0], repeats)
    out.append(_row("jax.jit transpose", "peer", us or [float("nan")] * 20, rows, cols, dtype,
                    "wall-clock" if us else "skipped", l2, note))
    return out


def best_peer_gbps(rows: list[BenchRow]) -> dict[tuple[int, int, str], float]:
    """(rows, cols, dtype) -> GB/s of the fastest peer measured at that size (peers that ran)."""
    best: dict[tuple[int, int, str], float] = {}
    for r in rows:
        if r.kind == "peer" and r.gbps == r.gbps:
            key = (r.rows, r.cols, r.dtype)
            best[key] = max(best.get(key, 0.0), r.gbps)
    return best


def table(rows: list[BenchRow]) -> str:
    """Fixed-width text table: name, kind, size, dtype, median us, p10-p90, GB/s, % memcpy, and the
    ratio to the fastest peer measured at the same size and dtype (nan where no peer ran)."""
    best = best_peer_gbps(rows)
    lines = [f"{'name':<32} {'kind':<8} {'size':>12} {'dtype':<8} {'where':<5} {'median us':>10} "
             f"{'p10-p90 us':>17} {'GB/s':>8} {'% memcpy':>9} {'x best peer':>11}  note"]
    for r in rows:
        ratio = r.gbps / best.get((r.rows, r.cols, r.dtype), float("nan"))
        lines.append(f"{r.name:<32} {r.kind:<8} {f'{r.rows}x{r.cols}':>12} {r.dtype:<8} {r.resident:<5} "
                     f"{r.median_us:10.1f} {f'{r.p10_us:.1f}-{r.p90_us:.1f}':>17} {r.gbps:8.0f} "
                     f"{r.pct_of_memcpy:8.1f}% {ratio:10.3f}x  {r.note}")
    return "\n".join(lines)


def as_json(rows: list[BenchRow], provenance: dict[str, Any]) -> dict[str, Any]:
    return {"provenance": provenance, "rows": [asdict(r) for r in rows]}


#: Sizes of the sweep: (rows, cols), from L2-resident to far past the 60 MB L2, square, non-square
#: and not multiples of 32.
SWEEP_SIZES = ((1024, 1024), (2048, 2048), (4096, 4096), (8192, 8192), (16384, 16384),
               (8192, 2048), (2048, 8192), (4097, 8191), (1000, 3000))


def sweep_points(case: Case, ref: str, *, quick: bool = False, repeats: int = 30) -> list[SweepPoint]:
    """The whole benchmark as work units: headline sizes with peers and the block-shape sweep,
    dtypes at equal bytes, the size sweep, attempts. ``ref`` is how a worker finds the case."""
    def size(r: int, c: int) -> tuple[tuple[str, int], ...]:
        return (("rows", r), ("cols", c))

    headline = [(8192, 8192, "float32")] if quick else [
        (8192, 8192, "float32"), (16384, 16384, "float32"),
        (8192, 16384, "float16"), (8192, 4096, "float64"),
    ]
    points: list[SweepPoint] = []
    for r, c, dt in headline:
        points += [SweepPoint(ref, "size", size(r, c), dt, repeats=repeats),
                   SweepPoint(ref, "shapes", size(r, c), dt, repeats=repeats)]
    if quick:
        return points
    tags = set(headline)
    points += [SweepPoint(ref, "size", size(r, c), dt, peers=False, repeats=repeats)
               for dt in ("float32", "float16", "float64") for r, c in SWEEP_SIZES if (r, c, dt) not in tags]
    points += [SweepPoint(ref, "size", size(8192, 8192), "float32", stages="vec", options=(opt,), suffix=f" [{opt}]",
                          peers=False, repeats=repeats) for opt in ("-maxrregcount=32",)]
    return points


def bench_point(case: Case, point: SweepPoint) -> list[BenchRow]:
    """One work unit of :func:`sweep_points` on this process's GPU."""
    d = point.dims
    if point.unit == "shapes":
        return bench_shapes(case, d["rows"], d["cols"], point.dtype, repeats=point.repeats)
    stages = [s for s in case.manifest.stages if s.launch == point.stages] if point.stages else None
    return bench_size(case, d["rows"], d["cols"], point.dtype, repeats=point.repeats, with_peers=point.peers,
                      stages=stages, options=point.options, suffix=point.suffix)


def run_all(case: Case, *, quick: bool = False, repeats: int = 30) -> list[BenchRow]:
    """The whole benchmark in-process: every point of :func:`sweep_points`, in order."""
    return [row for p in sweep_points(case, case.name, quick=quick, repeats=repeats) for row in bench_point(case, p)]


def make_pairs(case: Case, cupy: Any, rows: int, cols: int, dtype: str, buffers: int) -> list[tuple[Any, Any]]:
    """(input, output) pairs; the output buffer also serves the copies (they write as many bytes)."""
    size = {"rows": rows, "cols": cols}
    return [(case.make_input(cupy, size, dtype, seed=i + 1), cupy.empty((cols, rows), dtype=dtype))
            for i in range(buffers)]


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against the peers at the run's size (``run --peers``): bench.json's content."""
    return as_json(bench_size(case, size["rows"], size["cols"], dtype, repeats=repeats, stages=stages), provenance)
