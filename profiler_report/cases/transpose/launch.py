"""Launch geometry of the transpose stages: grid, block and dynamic shared memory per ``launch``
kind of ``kernels/transpose/stages.toml``."""

from __future__ import annotations

from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: Micro-rows per warp of ``transpose_vec_deep`` and ``transpose_vec_colwalk`` (their DEPTH default).
VEC_DEEP_DEPTH = 2
#: Bytes per access of copy_wide's word types.
WORD_BYTES = {"unsigned int": 4, "uint2": 8, "uint4": 16}


#: Launch kinds whose tile shape is a template parameter (micro-block rows, columns, threads).
TUNED_LAUNCHES = ("vec_tuned", "vec_peeled", "vec_realigned")
#: Every launch kind :func:`launch_shape` knows ("tile", the default, is a 32x8 block per 32x32 tile).
LAUNCH_KINDS = ("tile", "vec", "vec_deep", "vec_colwalk", *TUNED_LAUNCHES, "copy_wide")


def tuned_shape(stage: Stage) -> tuple[int, int, int]:
    """(micro-block rows, micro-block columns, threads per block) of a ``vec_tuned``, ``vec_peeled``
    or ``vec_realigned`` launch (the first three template arguments)."""
    trc, tcc, nt = (int(a) for a in stage.targs[:3])
    return trc, tcc, nt


def realigned_tiles_per_block(stage: Stage) -> int:
    """Tiles one block of ``transpose_vec_realigned`` takes (its optional fourth template argument,
    ``TPB``); above 1 it double-buffers them (two staged tiles of shared memory)."""
    return int(stage.targs[3]) if len(stage.targs) > 3 else 1


def realigned_splits(stage: Stage) -> bool:
    """Whether a ``vec_realigned`` launch splits its last wave's tiles (the kernel's SPLITS): one tile
    a block and two output passes a tile (threads = 16 x chunk columns), so that a narrow tile, half
    the columns, is half the work."""
    if stage.launch != "vec_realigned" or realigned_tiles_per_block(stage) != 1:
        return False
    _, tcc, nt = tuned_shape(stage)
    return nt == 16 * tcc


def realigned_tail_split(tiles: int, resident: int) -> int:
    """Tiles of a ``vec_realigned`` launch split into two narrow ones (the blocks its grid adds):
    the last wave's R = ``tiles`` mod ``resident`` where R is at most half a wave of ``resident``
    blocks (then 2R narrow tiles fill that wave at most and it runs half as long), else none.

    Measured on the H200 (scripts/experiments/results/README.md, tail_split_run1.log): float16
    +0.5 to +2.4 % of memcpy at the odd shapes with ``[16,16,256]``, level in float32 and float64;
    splitting R at any R, or a whole wave, was no better.
    """
    if resident < 1:
        return 0
    r = tiles % resident
    return r if r <= resident // 2 else 0


def dynamic_smem_bytes(stage: Stage, dtype: str) -> int:
    """Dynamic shared memory of a launch in bytes: the 16-byte-chunk tiles of the deep stages (two
    staged tiles for a double-buffered ``vec_realigned``)."""
    v = 16 // ITEMSIZE[dtype]
    if stage.launch in ("vec_deep", "vec_colwalk"):
        return 32 * v * 8 * VEC_DEEP_DEPTH * 16
    if stage.launch == "vec_realigned":
        return realigned_smem_bytes(*tuned_shape(stage)[:2], v) * (2 if realigned_tiles_per_block(stage) > 1 else 1)
    if stage.launch in TUNED_LAUNCHES:
        trc, tcc, _ = tuned_shape(stage)
        return trc * tcc * v * 16
    return 0


def realigned_rows_fit(trc: int, v: int) -> bool:
    """Whether ``transpose_vec_realigned`` takes ``trc`` chunk rows for ``v`` elements a chunk: 8 to
    32, and whole 32-element pieces of an output row (``trc * v`` a multiple of 32; the kernel's
    static_assert): 12, 20 and 28 only for 2-byte elements, 8 and 24 for 2- and 4-byte ones."""
    return 8 <= trc <= 32 and trc * v % 32 == 0


def realigned_smem_bytes(trc: int, tcc: int, v: int) -> int:
    """Shared memory of ``transpose_vec_realigned`` in bytes: ``trc * v`` input rows plus a halo of
    ``2 v - 1`` (a sector), in groups of 32 rows (64 16-byte chunks for the rows' extra sectors,
    then ``tcc`` chunks a row), the last group only as long as its rows (the kernel's RIN and
    GROUP)."""
    rin = trc * v + 2 * v - 1
    return ((rin - 1) // 32 * (32 * tcc + 64) + 64 + ((rin - 1) % 32 + 1) * tcc) * 16


def launch_shape(stage: Stage, rows: int, cols: int, dtype: str, tile: int = 32) -> tuple[tuple, tuple]:
    """(grid, block) of a stage's launch for a ``rows x cols`` input."""
    v = 16 // ITEMSIZE[dtype]
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
