"""Launch geometry of the transpose stages: grid, block and dynamic shared memory per ``launch``
kind of ``kernels/transpose/stages.toml``."""

from __future__ import annotations

from profiler_report.cases.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: Micro-rows per warp of ``transpose_vec_deep`` and ``transpose_vec_colwalk`` (their DEPTH default).
VEC_DEEP_DEPTH = 2
#: Bytes per access of copy_wide's word types.
WORD_BYTES = {"unsigned int": 4, "uint2": 8, "uint4": 16}


#: Launch kinds whose tile shape is a template parameter (micro-block rows, columns, threads).
TUNED_LAUNCHES = ("vec_tuned", "vec_peeled", "vec_realigned")
#: Every launch kind :func:`launch_shape` knows ("tile", the default, is a 32x8 block per 32x32 tile).
LAUNCH_KINDS = ("tile", "vec", "vec_deep", "vec_colwalk", *TUNED_LAUNCHES, "vec_streamed", "copy_wide")
#: Shared memory an H100/H200 SM gives its blocks, and what it reserves per block, in bytes.
SM_SHARED_BYTES, BLOCK_RESERVED_BYTES = 233472, 1024


def streamed_shape(stage: Stage) -> tuple[int, int, int]:
    """(chunk columns, threads, ring groups) of a ``vec_streamed`` launch (its template arguments)."""
    tcc, nt, s = (int(a) for a in stage.targs[:3])
    return tcc, nt, s


def streamed_smem_bytes(tcc: int, s: int) -> int:
    """Shared memory of ``transpose_vec_streamed``: ``s`` groups of 32 staged rows, each 64 16-byte
    chunks for the rows' extra sectors and ``tcc`` chunks a row (the kernel's GROUP and RING)."""
    return s * (32 * tcc + 64) * 16


def streamed_blocks_per_sm(tcc: int, nt: int, s: int) -> int:
    """Blocks of ``transpose_vec_streamed`` an SM holds: its launch bounds' (``streamed_min_blocks``:
    1536 / nt, fewer where the ring's shared memory does not fit)."""
    by_smem = SM_SHARED_BYTES // (streamed_smem_bytes(tcc, s) + BLOCK_RESERVED_BYTES)
    return 1536 // nt if by_smem >= 1536 // nt else max(by_smem, 1)


def tuned_shape(stage: Stage) -> tuple[int, int, int]:
    """(micro-block rows, micro-block columns, threads per block) of a ``vec_tuned``, ``vec_peeled``
    or ``vec_realigned`` launch (the first three template arguments)."""
    trc, tcc, nt = (int(a) for a in stage.targs[:3])
    return trc, tcc, nt


def realigned_tiles_per_block(stage: Stage) -> int:
    """Tiles one block of ``transpose_vec_realigned`` takes (its optional fourth template argument,
    ``TPB``); above 1 it double-buffers them (two staged tiles of shared memory)."""
    return int(stage.targs[3]) if len(stage.targs) > 3 else 1


def dynamic_smem_bytes(stage: Stage, dtype: str) -> int:
    """Dynamic shared memory of a launch in bytes: the 16-byte-chunk tiles of the deep stages (two
    staged tiles for a double-buffered ``vec_realigned``)."""
    v = 16 // ITEMSIZE[dtype]
    if stage.launch in ("vec_deep", "vec_colwalk"):
        return 32 * v * 8 * VEC_DEEP_DEPTH * 16
    if stage.launch == "vec_streamed":
        tcc, _, s = streamed_shape(stage)
        return streamed_smem_bytes(tcc, s)
    if stage.launch == "vec_realigned":
        return realigned_smem_bytes(*tuned_shape(stage)[:2], v) * (2 if realigned_tiles_per_block(stage) > 1 else 1)
    if stage.launch in TUNED_LAUNCHES:
        trc, tcc, _ = tuned_shape(stage)
        return trc * tcc * v * 16
    return 0


def realigned_smem_bytes(trc: int, tcc: int, v: int) -> int:
    """Shared memory of ``transpose_vec_realigned`` in bytes: ``trc * v`` input rows plus a halo of
    ``2 v - 1`` (a sector), in groups of 32 rows (64 16-byte chunks for the rows' extra sectors,
    then ``tcc`` chunks a row), the last group only as long as its rows (the kernel's RIN and
    GROUP)."""
    rin = trc * v + 2 * v - 1
    return ((rin - 1) // 32 * (32 * tcc + 64) + 64 + ((rin - 1) % 32 + 1) * tcc) * 16


def launch_shape(stage: Stage, rows: int, cols: int, dtype: str, tile: int = 32,
                 sms: int | None = None) -> tuple[tuple, tuple]:
    """(grid, block) of a stage's launch for a ``rows x cols`` input (``sms``: the GPU's SM count,
    which a ``vec_streamed`` grid needs)."""
    v = 16 // ITEMSIZE[dtype]
    if stage.launch == "vec_streamed":
        tcc, nt, s = streamed_shape(stage)
        strips, slots = -(-cols // (tcc * v)), max(1, (sms or 0) * streamed_blocks_per_sm(tcc, nt, s))
        return (strips * max(1, slots // strips),), (nt,)
    if stage.launch == "vec":
        return ((cols + 32 * v - 1) // (32 * v), (rows + 8 * v - 1) // (8 * v)), (256,)
    if stage.launch in ("vec_deep", "vec_colwalk"):
        depth = VEC_DEEP_DEPTH
        gx, gy = (cols + 32 * v - 1) // (32 * v), (rows + 8 * v * depth - 1) // (8 * v * depth)
        return ((gx, gy) if stage.launch == "vec_deep" else (gy, gx)), (256,)
    if stage.launch in TUNED_LAUNCHES:
        trc, tcc, nt = tuned_shape(stage)
        tiles = -(-rows // (trc * v)) * -(-cols // (tcc * v))
        per_block = realigned_tiles_per_block(stage) if stage.launch == "vec_realigned" else 1
        return (-(-tiles // per_block),), (nt,)
    if stage.launch == "copy_wide":
        words = rows * cols * ITEMSIZE[dtype] // WORD_BYTES[stage.targs[0]]
        per_block = 256 * int(stage.targs[1])
        return (max(1, -(-words // per_block)),), (256,)
    return ((cols + tile - 1) // tile, (rows + tile - 1) // tile), (32, 8)
