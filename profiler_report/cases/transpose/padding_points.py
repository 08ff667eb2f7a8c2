"""The padding sweep's points (:mod:`.padding_sweep`): the matrix, the block shape and the kernel
instantiations of ``kernels/transpose/padding_sweep.cu``. Shared by the table side
(:mod:`.padding_sweep`) and the GPU side (:mod:`.padding_sweep_gpu`), which import it and not
each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from profiler_report.util.resources import resource_dir

SOURCE = resource_dir("kernels") / "transpose" / "padding_sweep.cu"
#: The matrix every point transposes: a multiple of the tile, so every warp of every launch makes
#: the same access and the per-instruction figures are the model's per-warp figures exactly.
SIZE = {"rows": 2048, "cols": 2048}
#: Threads per block of every point (``SWEEP_THREADS`` in the kernel): blockDim = (bx, 256 / bx).
THREADS = 256
PADS = (0, 1, 2, 3, 4)
_CTYPE = {4: "float", 8: "double"}
_DTYPE = {4: "float32", 8: "float64"}


@dataclass(frozen=True)
class Point:
    """One kernel of the sweep: element bytes, blockDim.x and the pad in elements."""

    elem_bytes: int
    bx: int
    pad: int

    @property
    def id(self) -> str:
        return f"f{8 * self.elem_bytes}_bx{self.bx}_pad{self.pad}"

    @property
    def ctype(self) -> str:
        return _CTYPE[self.elem_bytes]

    @property
    def dtype(self) -> str:
        return _DTYPE[self.elem_bytes]

    @property
    def tile(self) -> str:
        return f"{self.ctype} tile[32][{32 + self.pad}]"


POINTS: tuple[Point, ...] = tuple(Point(e, bx, pad) for e in (4, 8) for bx in (32, 16) for pad in PADS)


def name_expression(p: Point) -> str:
    """The instantiation NVRTC compiles, e.g. ``transpose_pad_sweep<float,1,32>``."""
    return f"transpose_pad_sweep<{p.ctype},{p.pad},{p.bx}>"


def launch_shape(p: Point, rows: int, cols: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(grid, block) of one point: one block per 32x32 tile, ``bx x 256 / bx`` threads."""
    return ((cols + 31) // 32, (rows + 31) // 32), (p.bx, THREADS // p.bx)
