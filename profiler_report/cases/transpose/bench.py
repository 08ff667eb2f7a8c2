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

from profiler_report.analysis.ceilings import point_ceiling
from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.cases.transpose.launch import dynamic_smem_bytes, realigned_rows_fit, tuned_shape
from profiler_report.live.fanout import SweepPoint
from profiler_report.live.gpu import device_info, event_times_us, import_cupy, memcpy_fn, poison
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
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
    # The ceiling this row's point is judged against (:func:`judge_against_ceiling`): "memcpy" at
    # DRAM points, "L2 ceiling: <fastest copy>" at L2-resident ones; and GB/s as a % of it.
    ceiling: str = ""
    pct_of_point_ceiling: float = float("nan")
    # The configuration that ran ([micro-block rows, cols, threads]) where the sweep chose it per
    # point (the vec_realigned stage row at a "sweep" point; see choose_config).
    config: str = ""


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


#: Candidate configurations of ``vec_realigned`` timed at every sweep point ([chunk rows, chunk
#: columns, threads] and optionally tiles per block: 8 to 32 rows (launch.realigned_rows_fit); 8 to
#: 32 columns; threads = 32 or 16 x columns, as the kernel's static_assert wants): the fastest
#: somewhere in scripts/experiments/results/README.md (16 rows for float16, 32 columns for float64,
#: two double-buffered tiles per block for the largest float64 and float16 shapes; [16, 16, 256] and
#: [16, 32, 512] for float32 at the odd shapes; [20, 16, 512] and [24, 16, 512], three blocks per SM,
#: for float16 at three odd shapes; [8, 16, 256] for float16 at two). [32, 32, 1024] (one block per
#: SM) was the slowest everywhere. Small tiles for the L2-resident sizes ([8, 8, 256] and [16, 8, 128],
#: where the large ones run under a wave of blocks) were below the best stage at every L2 point
#: (scripts/experiments/results/README.md, eleventh session).
CONFIGS = ((16, 8, 256), (16, 16, 512), (32, 8, 256), (32, 16, 256), (32, 16, 512), (32, 32, 512),
           (16, 8, 256, 2), (16, 16, 512, 2), (32, 16, 512, 2), (32, 32, 512, 2), (16, 16, 256), (16, 32, 512),
           (20, 16, 512), (24, 16, 512), (8, 16, 256))
#: The launch kind whose configuration the sweep chooses per point.
CONFIG_LAUNCH = "vec_realigned"


def config_stages(case: Case, dtype: str) -> list[Stage]:
    """The manifest's ``vec_realigned`` stage at every CONFIGS entry that the kernel takes for
    ``dtype`` (its rows: :func:`~profiler_report.cases.transpose.launch.realigned_rows_fit`) and whose
    shared memory fits (and at the manifest's own configuration where it fits); [] without the stage."""
    found = [s for s in case.manifest.stages if s.launch == CONFIG_LAUNCH]
    if not found:
        return []
    base = found[-1]
    default = tuple(int(a) for a in base.targs)
    v = 16 // ITEMSIZE[dtype]
    configs = [c for c in CONFIGS if realigned_rows_fit(c[0], v)
               and dynamic_smem_bytes(replace(base, targs=tuple(map(str, c))), dtype) <= MAX_DYNAMIC_SMEM]
    fits = dynamic_smem_bytes(base, dtype) <= MAX_DYNAMIC_SMEM  # a default's tile may not fit this dtype
    configs += [default] if default not in configs and fits else []
    return [replace(base, id=f"{base.id} [{','.join(map(str, c))}]", targs=tuple(map(str, c))) for c in configs]


def choose_config(candidates: list[BenchRow], default: str) -> BenchRow | None:
    """The configuration that runs at a point: the candidate with the best (lowest) median, unless
    the manifest's ``default`` ("[16,16,256]") is within the run-to-run spread of it (the default's
    median not above the best's p90: :func:`~profiler_report.analysis.verdicts.slower_beyond_spread`
    at the default's median), in which case the default is kept. The default's median, not its p10:
    at float16 8191x8193 a default 3.2 % slower by median had a p10 below the best's p90 and was kept
    (reports/h200/sweep.json at eb9d1c2). Wrong or untimed candidates never win; None if none ran."""
    timed = [r for r in candidates if r.median_us == r.median_us and not r.note.startswith("WRONG")]
    if not timed:
        return None
    best = min(timed, key=lambda r: r.median_us)
    dflt = next((r for r in timed if r.config == default), None)
    return dflt if dflt is not None and not slower_beyond_spread(dflt.median_us, best.p90_us) else best


def judge_against_ceiling(rows: list[BenchRow]) -> None:
    """Set ``ceiling`` and ``pct_of_point_ceiling`` on the rows of one point (one size and dtype):
    :func:`~profiler_report.analysis.ceilings.point_ceiling` (memcpy at DRAM points, the fastest
    same-size copy at L2-resident ones)."""
    found = point_ceiling(asdict(r) for r in rows)
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
        # A fresh cache per point: each size compiles its own static kernel, as a user's process
        # with one shape would, and never meets Dynamo's recompile limit (past it, eager runs).
        torch._dynamo.reset()
        compiled = torch.compile(lambda x: x.t().contiguous(), dynamic=False)
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


#: JAX is timed by wall clock (its stream is not CuPy's): each sample is one batch of this many
#: back-to-back calls (inputs rotated) closed by block_until_ready, divided by the batch size, so
#: dispatch overlaps the kernels as it does for the event-timed peers.
JAX_BATCH = 10


def jax_time(cupy: Any, pairs: list[tuple[Any, Any]], repeats: int) -> tuple[list[float] | None, str]:
    """Wall-clock microseconds per call of a jitted ``jnp.transpose`` (batches of JAX_BATCH, see
    there), or (None, why).

    The output is checked before timing: same dtype as the input (JAX casts float64 to float32
    unless ``jax_enable_x64`` is on: that halved the bytes and made JAX "faster than memcpy"),
    C-contiguous as CuPy sees it through DLPack (a materialised row-major transpose, not a
    re-layout), and bit for bit the transpose.
    """
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        return None, f"jax not installed ({exc})"
    jax.config.update("jax_enable_x64", True)
    xs = [_to_jax(jax, jnp, cupy, src) for src, _ in pairs]
    f = jax.jit(jnp.transpose)
    y = f(xs[0]).block_until_ready()
    got = cupy.from_dlpack(y)
    src = pairs[0][0]
    if str(got.dtype) != str(src.dtype) or not got.flags.c_contiguous:
        return None, f"jax output is {got.dtype} {'C' if got.flags.c_contiguous else 'not C'}-contiguous, not a " \
                     f"row-major {src.dtype} transpose"
    if not _bits_equal(cupy, got, cupy.ascontiguousarray(src.T)):
        return None, "jax output differs from the reference"
    del y, got
    for x in xs:
        f(x).block_until_ready()  # warm-up
    us = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        outs = [f(xs[i % len(xs)]) for i in range(JAX_BATCH)]
        jax.block_until_ready(outs)  # every call of the batch finished, not only the last
        us.append((time.perf_counter() - t0) * 1e6 / JAX_BATCH)
        del outs
    return us, f"wall clock per call, batches of {JAX_BATCH} calls; jit(jnp.transpose), x64 on, output checked"


def _to_jax(jax: Any, jnp: Any, cupy: Any, src: Any) -> Any:
    """The CuPy array as a JAX array on the GPU: zero-copy through DLPack, else through the host."""
    try:
        return jax.dlpack.from_dlpack(src)
    except Exception:  # an older jax without the protocol, or a layout it refuses
        return jnp.asarray(cupy.asnumpy(src))


def bench_size(case: Case, rows: int, cols: int, dtype: str, *, repeats: int = 30, warmup: int = 5,
               buffers: int = 3, with_peers: bool = True, stages: list[Stage] | None = None,
               options: tuple[str, ...] = (), suffix: str = "", configs: bool = False) -> list[BenchRow]:
    """Time memcpy, the copy kernels, the stages and (optionally) the peers at one size.

    ``options`` are extra NVRTC options (an attempt such as ``-maxrregcount=32``); ``suffix``
    is appended to the stage names of such an attempt. ``configs``: time the ``vec_realigned`` stage
    at every :func:`config_stages` configuration (rows of kind "config", the chosen one marked)
    and give its stage row the chosen configuration's timing (:func:`choose_config`; ``config``
    names it). Every row gets its point's ceiling (:func:`judge_against_ceiling`).
    """
    cupy = import_cupy()
    l2 = device_info()["l2_bytes"]
    candidates = config_stages(case, dtype) if configs else []
    module, names = compile_module(case, dtype, options, extra=COPIES + tuple(stages or ()) + tuple(candidates))
    k = Kernels(module, names, dtype, case)
    pairs = make_pairs(case, cupy, rows, cols, dtype, buffers)
    warm_sm_clocks(cupy, pairs)
    rows_out = [_memcpy_row(cupy, pairs, rows, cols, dtype, repeats, warmup, l2)]
    entries: list[tuple[str, str, Stage]] = [("copy (4-byte tiled)", "ceiling", case.manifest.ceiling)]
    entries += [(c.id, "ceiling", c) for c in COPIES]
    entries += [(s.id + suffix, "stage", s) for s in (stages or case.manifest.stages)
                if not (candidates and s.launch == CONFIG_LAUNCH)]
    rows_out += [_kernel_row(cupy, k, name, kind, st, pairs, rows, cols, repeats, warmup, l2)
                 for name, kind, st in entries]
    rows_out += _config_rows(cupy, k, case, candidates, pairs, rows, cols, repeats, warmup, l2)
    if with_peers:
        rows_out += _peer_rows(cupy, pairs, rows, cols, dtype, repeats, warmup, l2)
    base = rows_out[0].gbps
    for r in rows_out:
        r.pct_of_memcpy = 100 * r.gbps / base
    judge_against_ceiling(rows_out)
    flag_faster_than_memcpy(rows_out)
    return rows_out


def _config_rows(cupy: Any, k: Kernels, case: Case, candidates: list[Stage], pairs: list[tuple[Any, Any]],
                 rows: int, cols: int, repeats: int, warmup: int, l2: int) -> list[BenchRow]:
    """Rows of kind "config" (one per candidate, ``chosen`` on the one :func:`choose_config` keeps)
    and, after them, the stage row: the chosen candidate's timing under the stage's own name."""
    if not candidates:
        return []
    v = 16 // ITEMSIZE[k.dtype]
    out = []
    for st in candidates:
        row = _kernel_row(cupy, k, st.id, "config", st, pairs, rows, cols, repeats, warmup, l2)
        trc, tcc, nt = tuned_shape(st)
        row.tile, row.threads, row.per_thread = f"{trc * v}x{tcc * v}", nt, trc * tcc // nt
        row.config = f"[{','.join(st.targs)}]"
        out.append(row)
    stage = next(s for s in case.manifest.stages if s.launch == CONFIG_LAUNCH)
    default = f"[{','.join(stage.targs)}]"
    chosen = choose_config(out, default)
    if chosen is None:  # every candidate wrong: the stage row says so, untimed
        return [*out, replace(out[0], name=stage.id, kind="stage", config="", note=out[0].note)]
    chosen.chosen = True
    if chosen.config == default:
        how = "the manifest's default, the fastest or its median within the fastest's p10-p90"
    elif _timed(out, default):
        how = f"the fastest median; the default {default}'s median is above its p90"
    else:
        how = f"the fastest median; the default {default} did not run correctly"
    return [*out, replace(chosen, name=stage.id, kind="stage", chosen=False,
                          note=f"configuration {chosen.config} chosen at this point: {how}")]


def _timed(rows: list[BenchRow], config: str) -> bool:
    return any(r.config == config and r.median_us == r.median_us for r in rows)


def _memcpy_row(cupy: Any, pairs: list[tuple[Any, Any]], rows: int, cols: int, dtype: str, repeats: int,
                warmup: int, l2: int) -> BenchRow:
    return _row("memcpy", "ceiling", event_times_us(memcpy_fn(cupy), pairs, repeats, warmup),
                rows, cols, dtype, "cuda-events", l2, "cudaMemcpyAsync device-to-device")


def _kernel_row(cupy: Any, k: Kernels, name: str, kind: str, st: Stage, pairs: list[tuple[Any, Any]],
                rows: int, cols: int, repeats: int, warmup: int, l2: int) -> BenchRow:
    """One kernel checked bit for bit, then event-timed; a wrong one gets NaN times and a WRONG note."""
    def fn(src: Any, dst: Any) -> None:
        k.launch(st, src, dst, {"rows": rows, "cols": cols})
    bad = check_output(cupy, name, fn, pairs, copy=st.op == "copy")
    if bad:
        return _row(name, kind, [float("nan")] * 20, rows, cols, k.dtype, "cuda-events", l2, "WRONG: " + bad)
    return _row(name, kind, event_times_us(fn, pairs, repeats, warmup), rows, cols, k.dtype, "cuda-events", l2)


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
    warm_sm_clocks(cupy, pairs)
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
            t0 = time.perf_counter()
            bad = check_output(cupy, name, fn, pairs)
            if time.perf_counter() - t0 > 1:  # the first call built a kernel (torch.compile): SMs idle
                warm_sm_clocks(cupy, pairs)
            us = [float("nan")] * 20 if bad else event_times_us(fn, pairs, repeats, warmup)
            out.append(_row(name, "peer", us, rows, cols, dtype, "cuda-events", l2, bad or note))
        except Exception as exc:  # a peer library failing must not stop the benchmark
            out.append(_row(name, "peer", [float("nan")] * 20, rows, cols, dtype, "failed", l2,
                            f"{type(exc).__name__}: {str(exc)[:160]}"))
    try:
        us, note = jax_time(cupy, pairs, repeats)
    except Exception as exc:  # as for the other peers: a failing library must not stop the benchmark
        us, note = None, f"failed: {type(exc).__name__}: {str(exc)[:160]}"
    out.append(_row("jax.jit transpose", "peer", us or [float("nan")] * 20, rows, cols, dtype,
                    "wall-clock" if us else ("failed" if note.startswith("failed") else "skipped"), l2, note))
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
    (scripts/experiments/results/l2_output_reuse_run1.log). ``shared_output`` False gives each pair
    its own output (the rule before commit 2e8a4ca, kept by the experiments recorded with it)."""
    size = {"rows": rows, "cols": cols}
    out = cupy.empty((cols, rows), dtype=dtype)
    return [(case.make_input(cupy, size, dtype, seed=i + 1), out if shared_output else cupy.empty_like(out))
            for i in range(buffers)]


def bench_at(case: Case, size: dict[str, int], dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """The stages against the peers at the run's size (``run --peers``): bench.json's content."""
    return as_json(bench_size(case, size["rows"], size["cols"], dtype, repeats=repeats, stages=stages), provenance)
