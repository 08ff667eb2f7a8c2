"""Launch shapes of the bf16 GEMM kernels (``launch`` in kernels/hgemm/stages.toml) and the
layout of the case's buffers.

Launch kinds (one block per BM x BN tile of C, grid (ceil(N / BN), ceil(M / BM)), but the
persistent kind):
    ``mma_sync``: 128 x 128 tiles, static shared memory only (two 2 x 128 x 40 bf16 buffers).
    ``wgmma``: 128 x 128 tiles, two warpgroups; dynamic shared memory for STAGES (the template)
        A and B tiles of 64 columns, plus 1 KB to align the first tile to 1024 bytes.
    ``wide_tile``: 128 x 256 tiles, likewise.
    ``tma``: as ``wide_tile``; the operands come as tensor maps (:mod:`.tma`), the tiles in a grouped
        order (the kernel maps the block).
    ``specialized``: 128 x 256 tiles, 384 threads (a producer and two consumer warpgroups).
    ``persistent``: 384 threads, one block per resident slot (one per SM: the tiles fill its shared
        memory), each walking several tiles: the grid is min(tiles, resident blocks).
    ``library``: a library routine (the ceiling: cuBLAS through ``torch.matmul``), no kernel.

The input is one buffer of 16-bit words (bf16 bits; CuPy has no bfloat16): a header of
:data:`HEADER` words whose first six hold M, N, K as little-endian 32-bit integers (so that the
reference knows the shapes), then A (M rows of :func:`row_stride` words) from :data:`HEADER`, then
B (N rows of the same stride) from :func:`b_offset`. The stride is K rounded up to a multiple of 8
(16 bytes), the padding zeros, so every 16-byte load of a row is aligned and lies inside the row;
both offsets are multiples of 64 words (128 bytes).
"""

from __future__ import annotations

import math

from profiler_report.model.base import Launch
from profiler_report.model.manifest import Stage

#: Words before A in the input buffer: M, N, K as three uint32, then zeros.
HEADER = 64
#: Every ``launch`` kind :func:`launch` knows.
LAUNCH_KINDS = ("mma_sync", "wgmma", "wide_tile", "tma", "specialized", "persistent", "library")
#: (BM, BN) of each kernel launch kind.
TILES = {"mma_sync": (128, 128), "wgmma": (128, 128), "wide_tile": (128, 256), "tma": (128, 256),
         "specialized": (128, 256), "persistent": (128, 256)}
#: Threads per block of each kernel launch kind.
THREADS = {"mma_sync": 256, "wgmma": 256, "wide_tile": 256, "tma": 256, "specialized": 384, "persistent": 384}
#: Launch kinds whose template is [STAGES, GROUP] (GROUP: tile rows of the grouped order); the other
#: wgmma kinds take [STAGES].
GROUPED_KINDS = ("tma", "specialized", "persistent")
#: Launch kinds whose kernels take their operands as TMA tensor maps (:mod:`.tma`), not pointers.
TMA_KINDS = ("tma", "specialized", "persistent")
#: K extent of one shared-memory tile of the wgmma kernels (64 bf16: one 128-byte swizzled row).
BK = 64
#: Largest dynamic shared memory a block may opt in to on sm_90 (227 KB).
MAX_SHARED = 227 * 1024


def row_stride(k: int) -> int:
    """Row stride of A and B in elements: K rounded up to a multiple of 8."""
    return (k + 7) // 8 * 8


def b_offset(m: int, k: int) -> int:
    """First word of B in the input buffer: after the header and A, rounded up to 64 words."""
    return (HEADER + m * row_stride(k) + 63) // 64 * 64


def input_words(m: int, n: int, k: int) -> int:
    """Length of the input buffer in 16-bit words."""
    return b_offset(m, k) + n * row_stride(k)


def shared_bytes(stage: Stage) -> int:
    """Dynamic shared memory of a wgmma stage: STAGES x (A and B tiles of BK columns) + 1024 for
    the alignment; 0 for ``mma_sync`` (its buffers are static).

    Raises:
        ValueError: a wgmma stage without its template values ([STAGES]; [STAGES, GROUP] for
            :data:`GROUPED_KINDS`), or more than :data:`MAX_SHARED`.
    """
    if stage.launch == "mma_sync":
        return 0
    wanted = 2 if stage.launch in GROUPED_KINDS else 1
    if len(stage.targs) != wanted:
        form = "[STAGES, GROUP]" if wanted == 2 else "[STAGES]"
        raise ValueError(f"stage {stage.id}: a {stage.launch} launch needs template = {form}, got {stage.targs}")
    bm, bn = TILES[stage.launch]
    total = int(stage.targs[0]) * (bm + bn) * BK * 2 + 1024
    if total > MAX_SHARED:
        raise ValueError(f"stage {stage.id}: {total} bytes of shared memory, over the {MAX_SHARED} a block may use")
    return total


def launch(stage: Stage, m: int, n: int) -> Launch:
    """Grid, block and dynamic shared memory of ``stage`` for an M x N result (K does not shape
    the grid).

    Raises:
        ValueError: an unknown launch kind, or a ``library`` stage (it launches no kernel).
    """
    if stage.launch not in TILES:
        raise ValueError(f"stage {stage.id}: launch {stage.launch!r} has no kernel grid")
    bm, bn = TILES[stage.launch]
    tiles = (math.ceil(n / bn), math.ceil(m / bm))
    threads = (THREADS[stage.launch],)
    if stage.launch == "persistent":
        # grid[0] is 0 plus extra_blocks(resident): every block the GPU holds at once, at most one per tile.
        ntiles = tiles[0] * tiles[1]
        return Launch((0,), threads, shared_bytes(stage), extra_blocks=lambda resident: min(ntiles, resident))
    return Launch(tiles, threads, shared_bytes(stage))
