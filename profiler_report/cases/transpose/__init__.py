"""The flagship case: a row-major matrix transpose, naive to the copy ceiling.

Data in global memory is row-major before and after; only the shared tile is read column-wise.
Stages, their expected effects and the ceiling copy are in ``kernels/transpose/stages.toml``.
Outputs are compared bit for bit with ``cupy.ascontiguousarray(a.T)`` (a copy stage with ``a``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from profiler_report.cases.transpose.launch import (
    LAUNCH_KINDS,
    dynamic_smem_bytes,
    launch_shape,
    realigned_splits,
    realigned_tail_split,
)
from profiler_report.cases.transpose.notes import block_shape_warning, tile_shape
from profiler_report.errors import InputError
from profiler_report.model.base import Case, Comparison, Launch, Size, Work
from profiler_report.model.experiment import Experiment
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: The largest side the kernels take (an int argument), and CUDA's grid limit in y and z.
MAX_SIDE = 2**31 - 1
MAX_GRID_YZ = 65535


class TransposeCase(Case):
    """``out[c, r] = in[r, c]`` for a ``rows x cols`` matrix of float16, float32 or float64."""

    name = "transpose"
    bench_module = "profiler_report.cases.transpose.bench"
    title = "matrix transpose"
    dims = ("rows", "cols")
    launch_kinds = LAUNCH_KINDS
    default_size = {"rows": 8192, "cols": 8192}  # noqa: RUF012
    compare_text = "bit-exact against cupy.transpose"
    validation_text = ("Random input in [1, 2) (never zero), output poisoned with all-ones bytes before each "
                       "launch, compared bit for bit with `cupy.transpose`.")

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """Bytes read + written: ``2 * rows * cols * itemsize`` (a copy moves as much)."""
        return Work(2 * size["rows"] * size["cols"] * ITEMSIZE[dtype])

    def size(self, values: Mapping[str, int | None]) -> Size:
        """As :meth:`Case.size`, and rows and cols at most 2^31 - 1 (the kernels take them as int).

        Raises:
            InputError: a dimension is unknown, below 1 or above that.
        """
        size = super().size(values)
        big = [d for d in self.dims if size[d] > MAX_SIDE]
        if big:
            raise InputError(f"transpose {big[0]} must be at most 2^31 - 1, got {size[big[0]]}",
                             f"use a smaller --{big[0]}")
        return size

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        """The stage's grid, block and dynamic shared memory at ``size``; a ``vec_realigned`` launch
        that splits its last wave (:func:`~profiler_report.cases.transpose.launch.realigned_splits`)
        adds :func:`~profiler_report.cases.transpose.launch.realigned_tail_split` blocks on the GPU.

        Raises:
            InputError: the grid exceeds CUDA's limits (2^31 - 1 blocks in x, 65535 in y).
        """
        grid, block = launch_shape(stage, size["rows"], size["cols"], dtype, self.manifest.tile)
        if grid[0] > MAX_SIDE or any(g > MAX_GRID_YZ for g in grid[1:]):
            raise InputError(f"stage {stage.id} at {self.size_text(size)} {dtype} needs a grid of "
                             f"{'x'.join(map(str, grid))} blocks: CUDA allows at most 2^31 - 1 in x and 65535 in y",
                             "use fewer rows or columns, or --stages without this stage")
        split = partial(realigned_tail_split, grid[0]) if realigned_splits(stage) else None
        return Launch(tuple(grid), tuple(block), dynamic_smem_bytes(stage, dtype), split)

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        import numpy as np

        return inputs, output, np.int32(size["rows"]), np.int32(size["cols"])

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """Uniform values in [1, 2): random, never zero, exactly representable after the cast."""
        rng = cupy.random.default_rng(seed)
        return (rng.random((size["rows"], size["cols"]), dtype=cupy.float32) + 1).astype(dtype)

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        shape = (size["rows"], size["cols"]) if stage.op == "copy" else (size["cols"], size["rows"])
        return cupy.empty(shape, dtype=dtype)

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Any:
        return inputs if stage.op == "copy" else cupy.ascontiguousarray(inputs.T)

    def compare(self, cupy: Any, out: Any, ref: Any) -> Comparison:
        """Bit for bit: a transpose moves bits, so any difference is a bug
        (:func:`~profiler_report.live.gpu.bits_differ`)."""
        from profiler_report.live.gpu import bits_differ

        wrong, at = bits_differ(cupy, out, ref)
        if wrong == 0:
            return Comparison(True)
        first = tuple(int(i) for i in divmod(at, out.shape[1]))
        return Comparison(False, wrong, first, repr(ref[first].item()), repr(out[first].item()))

    def normalize_source(self, source: str, stage_id: str) -> str:
        return source.replace(f"transpose_{stage_id}", "transpose_STAGE")

    def experiments(self) -> tuple[Experiment, ...]:
        """The padding sweep (:mod:`~profiler_report.cases.transpose.padding_sweep`)."""
        from profiler_report.cases.transpose.padding_sweep import EXPERIMENT

        return (EXPERIMENT,)

    def bank_maps(self, dtype: str) -> list[dict[str, Any]]:
        """The column read of ``smem``'s ``[32][32]`` tile and of ``padded``'s ``[32][33]``
        (blockDim.x 32), from the bank model (:mod:`~profiler_report.cases.transpose.banks`)."""
        from profiler_report.cases.transpose.banks import column_read

        elem = ITEMSIZE.get(dtype, 4)
        if elem % 4:
            return []  # 2-byte elements: two lanes share a word; the model covers 4 and 8 bytes
        out = []
        for stage, pad in (("smem", 0), ("padded", 1)):
            acc = column_read(pad, elem, 32)
            out.append({"stage": stage, "banks": [list(b) for b in acc.banks], "wavefronts": acc.wavefronts,
                        "ideal": acc.ideal, "words": [list(w) for w in acc.words],
                        "pitch_words": (32 + pad) * elem // 4, "rows": 32,
                        "title": f"{stage}: column read of tile[32][{32 + pad}] ({elem}-byte elements), one warp"})
        return out

    def stage_notes(self, row: Any, source: str | None) -> tuple[str, list[str]]:
        tile = tile_shape(source, self.manifest.tile)
        warning = block_shape_warning(row, tile)
        return tile, [warning] if warning else []


CASE = TransposeCase()
