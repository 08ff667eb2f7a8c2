"""Launch shapes of the GEMM kernels (``launch`` in kernels/gemm/stages.toml) and the layout of
the case's buffers.

Launch kinds:
    ``naive``: 32 x 32 threads, one per element of C, x along C's rows; grid (ceil(M/32), ceil(N/32)).
    ``tile32``: 32 x 32 threads, x along C's columns; grid (ceil(N/32), ceil(M/32)).
    ``block``: a 1-D block per BM x BN tile of C, grid (ceil(N/BN), ceil(M/BM)); BM, BN and the
        threads come from the template (:func:`block_shape`).
    ``library``: a library routine (the ceiling: cuBLAS through ``cupy.matmul``), no kernel.

The input is one float32 buffer: a header of :data:`HEADER` words holding M, N, K (so that the
reference knows the shapes), then A (M x K) from :data:`HEADER`, then B (K x N) from
:func:`b_offset` (a multiple of 64 words: 256-byte aligned, as the 16-byte loads need).
"""

from __future__ import annotations

import math

from profiler_report.model.base import Launch
from profiler_report.model.manifest import Stage

#: Words before A in the input buffer: M, N, K as float32 (exact up to 2^24), then padding.
HEADER = 64

#: Every ``launch`` kind :func:`launch` knows.
LAUNCH_KINDS = ("naive", "tile32", "block", "library")


def b_offset(m: int, k: int) -> int:
    """First word of B in the input buffer: after the header and A, rounded up to 64 words."""
    return (HEADER + m * k + 63) // 64 * 64


def input_words(m: int, n: int, k: int) -> int:
    """Length of the input buffer in float32 words."""
    return b_offset(m, k) + k * n


def block_shape(stage: Stage) -> tuple[int, int, int]:
    """(BM, BN, threads) of a ``block`` stage from its template (the kernel's template order):
    ``blocktile_1d`` [BM, BN, BK, TM] runs BM*BN/TM threads; ``blocktile_2d``, ``vectorized`` and
    ``conflict_free`` [BM, BN, BK, TM, TN, ...] BM*BN/(TM*TN); ``warptile`` [BM, BN, BK, WM, WN,
    WNITER, TM, TN, threads] its last value.

    Raises:
        ValueError: the template has none of these lengths.
    """
    t = [int(x) for x in stage.targs]
    if len(t) == 4:
        return t[0], t[1], t[0] * t[1] // t[3]
    if len(t) in (5, 6):
        return t[0], t[1], t[0] * t[1] // (t[3] * t[4])
    if len(t) == 9:
        return t[0], t[1], t[8]
    raise ValueError(f"stage {stage.id}: a block launch needs a template of 4, 5, 6 or 9 values, got {stage.targs}")


def launch(stage: Stage, m: int, n: int) -> Launch:
    """Grid and block of ``stage`` for an M x N result (K does not shape the grid); no dynamic
    shared memory (the tiles are static arrays).

    Raises:
        ValueError: an unknown launch kind, or a ``library`` stage (it launches no kernel).
    """
    if stage.launch == "naive":
        return Launch((math.ceil(m / 32), math.ceil(n / 32)), (32, 32))
    if stage.launch == "tile32":
        return Launch((math.ceil(n / 32), math.ceil(m / 32)), (32, 32))
    if stage.launch == "block":
        bm, bn, threads = block_shape(stage)
        return Launch((math.ceil(n / bn), math.ceil(m / bm)), (threads,))
    raise ValueError(f"stage {stage.id}: launch {stage.launch!r} has no kernel grid")
