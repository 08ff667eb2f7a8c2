"""The transpose's peers: other libraries' out-of-place transposes, timed beside the stages by
:mod:`profiler_report.live.bench` (a peer is one :class:`~profiler_report.live.bench.Peer` entry
of :data:`PEERS`). Each writes or returns the row-major ``cols x rows`` transpose of the input;
the harness checks it bit for bit before it is timed."""

from __future__ import annotations

import os
import time
from typing import Any

from profiler_report.live.bench import WALL, Fn, Peer, PeerUnavailable, Point, import_peer
from profiler_report.live.gpu import bits_differ


def bits_equal(cupy: Any, out: Any, ref: Any) -> bool:
    """Bit for bit equal (NaN payloads and signed zeros too): :func:`~profiler_report.live.gpu.bits_differ`."""
    return bits_differ(cupy, out, ref)[0] == 0


def _cupy_copy(cupy: Any, dtype: str) -> Fn:
    return lambda src, dst: src.T.copy()


def _geam(cupy: Any, dtype: str) -> Fn:
    if dtype not in ("float32", "float64"):
        raise PeerUnavailable("geam has no float16")
    from cupy import cublas  # a submodule: not imported by `import cupy`

    def fn(src: Any, dst: Any) -> None:
        cublas.geam("T", "N", 1.0, src, 0.0, dst, out=dst)
    return fn


def _torch_eager(cupy: Any, dtype: str) -> Fn:
    torch = import_peer("torch")
    return lambda src, dst: torch.from_dlpack(src).t().contiguous()


def _torch_compiled(cupy: Any, dtype: str) -> Fn:
    torch = import_peer("torch")
    # A fresh cache per point: each size compiles its own static kernel, as a user's process with
    # one shape would, and never meets Dynamo's recompile limit (past it, eager runs).
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: x.t().contiguous(), dynamic=False)
    return lambda src, dst: compiled(torch.from_dlpack(src))


def _triton(cupy: Any, dtype: str) -> Fn:
    torch = import_peer("torch")
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        raise PeerUnavailable(f"triton not installed ({exc})") from exc

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
    return fn


#: JAX is timed by wall clock (its stream is not CuPy's): each sample is one batch of this many
#: back-to-back calls (inputs rotated) closed by block_until_ready, divided by the batch size, so
#: dispatch overlaps the kernels as it does for the event-timed peers.
JAX_BATCH = 10


def _jax(cupy: Any, dtype: str) -> Any:
    """``time(point)``: wall-clock microseconds per call of a jitted ``jnp.transpose``
    (batches of JAX_BATCH), or (None, "WRONG: ...").

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
        raise PeerUnavailable(f"jax not installed ({exc})") from exc
    jax.config.update("jax_enable_x64", True)
    f = jax.jit(jnp.transpose)

    def time_it(point: Point) -> tuple[list[float] | None, str]:
        pairs, repeats = point.pairs, point.repeats
        xs = [_to_jax(jax, jnp, cupy, src) for src, _ in pairs]
        bad = _jax_wrong(cupy, f(xs[0]).block_until_ready(), pairs[0][0])
        if bad:
            return None, "WRONG: " + bad
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
    return time_it


def _jax_wrong(cupy: Any, y: Any, src: Any) -> str:
    got = cupy.from_dlpack(y)
    if str(got.dtype) != str(src.dtype) or not got.flags.c_contiguous:
        return (f"jax output is {got.dtype} {'C' if got.flags.c_contiguous else 'not C'}-contiguous, not a "
                f"row-major {src.dtype} transpose")
    return "" if bits_equal(cupy, got, cupy.ascontiguousarray(src.T)) else "jax output differs from the reference"


def _to_jax(jax: Any, jnp: Any, cupy: Any, src: Any) -> Any:
    """The CuPy array as a JAX array on the GPU: zero-copy through DLPack, else through the host."""
    try:
        return jax.dlpack.from_dlpack(src)
    except Exception:  # an older jax without the protocol, or a layout it refuses
        return jnp.asarray(cupy.asnumpy(src))


PEERS = (
    Peer("cupy a.T.copy()", _cupy_copy, "allocates its output (memory pool)"),
    Peer("cupy.cublas.geam", _geam, "cuBLAS geam, C = op(A)"),
    Peer("torch t().contiguous()", _torch_eager, "allocates its output (caching allocator)"),
    Peer("torch.compile t().contiguous()", _torch_compiled, "allocates its output (caching allocator)"),
    Peer("triton transpose", _triton, "64x64 tiles, tl.load/tl.store"),
    Peer("jax.jit transpose", _jax, timing=WALL),
)
