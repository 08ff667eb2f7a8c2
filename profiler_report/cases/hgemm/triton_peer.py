"""The Triton peer of the bf16 GEMM: a blocked ``tl.dot`` matmul of the case's TN layout (A M x K
and B N x K, both with row stride ld, zero-padded past K; C M x N), bf16 tiles, a float32
accumulator, the result rounded to bf16 once. Triton is imported on first use (GPU processes only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from profiler_report.live.bench import PeerUnavailable


def triton_matmul(tensors: Callable[[Any, Any], tuple[Any, Any, Any]]) -> Callable[[Any, Any], None]:
    """fn(src, dst) running the Triton kernel on ``tensors(src, dst)`` = (A, B, C) torch views.

    Raises:
        PeerUnavailable: Triton is not installed.
    """
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        raise PeerUnavailable(f"triton not installed ({exc})") from exc

    @triton.autotune(configs=[triton.Config({"BM": 128, "BN": 256}, num_warps=8, num_stages=3),
                              triton.Config({"BM": 128, "BN": 128}, num_warps=8, num_stages=4),
                              triton.Config({"BM": 128, "BN": 128}, num_warps=4, num_stages=3)],
                     key=["M", "N", "LD"])
    @triton.jit
    def _mm(a, b, c, M, N, LD, BM: tl.constexpr, BN: tl.constexpr):  # noqa: N803
        # The K loop runs over the row stride LD: the padding past K is zeros (the case's input).
        BK: tl.constexpr = 64  # noqa: N806  (the same K step in every tile shape tried)
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, LD, BK):
            kk = k0 + rk
            x = tl.load(a + rm[:, None] * LD + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < LD), other=0.0)
            y = tl.load(b + rn[None, :] * LD + kk[:, None], mask=(kk[:, None] < LD) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    def fn(src: Any, dst: Any) -> None:
        a, b, c = tensors(src, dst)
        m, n = a.shape[0], b.shape[0]
        grid = lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))  # noqa: E731
        _mm[grid](a, b, c, m, n, a.stride(0))

    return fn
