"""The reduction's peers: other libraries' sums of the n elements, timed beside the stages by
:mod:`profiler_report.live.bench` (a peer is one :class:`~profiler_report.live.bench.Peer` entry
of :data:`PEERS`). Each returns its sum; the harness checks it against the case's reference
(:func:`~profiler_report.cases.reduction.bench.check`) before it is timed."""

from __future__ import annotations

import os
import time
from typing import Any

from profiler_report.live.bench import WALL, Fn, Peer, PeerUnavailable, Point, import_peer


def _cupy_sum(cupy: Any, dtype: str) -> Fn:
    return lambda src, dst: cupy.sum(src)


def _torch_sum(cupy: Any, dtype: str) -> Fn:
    torch = import_peer("torch")
    return lambda src, dst: torch.sum(torch.from_dlpack(src))


def _triton(cupy: Any, dtype: str) -> Fn:
    torch = import_peer("torch")
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        raise PeerUnavailable(f"triton not installed ({exc})") from exc

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
    return fn


def _jax(cupy: Any, dtype: str) -> Any:
    """``time(point)``: wall-clock microseconds of a jitted ``jnp.sum`` (block_until_ready) of the
    first input, its sum checked first by the point's check (the case's reference)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        raise PeerUnavailable(f"jax not installed ({exc})") from exc
    f = jax.jit(jnp.sum)

    def time_it(point: Point) -> tuple[list[float] | None, str]:
        x = jnp.asarray(cupy.asnumpy(point.pairs[0][0]))
        bad = point.check(point, lambda src, dst: f(x).block_until_ready(), None)
        if bad:
            return None, "WRONG: " + bad
        us = []
        for _ in range(point.repeats):
            t0 = time.perf_counter()
            f(x).block_until_ready()
            us.append((time.perf_counter() - t0) * 1e6)
        return sorted(us), "wall clock incl. dispatch"
    return time_it


PEERS = (
    Peer("cupy.sum", _cupy_sum, "CUB DeviceReduce"),
    Peer("torch.sum", _torch_sum, "an int32 input sums in int64"),
    Peer("triton sum", _triton, "persistent grid (8 programs per SM) of 4096-element tl.sum, then torch.sum of the "
                                "partials"),
    Peer("jax.jit jnp.sum", _jax, timing=WALL),
)
