"""A profiler-report Python ladder: y = 2 * relu(x) over n elements (see stages.toml, stages.py).

Made by ``profiler-report new-case --python``. The tool asks this class what it needs to know
about the ladder: the size's dimensions, the work model (bytes per call: GB/s comes from it),
random input, the output buffer, the reference and how an output is compared with it. Buffers
are CuPy arrays (the stage functions receive them as torch tensors; bfloat16 buffers hold
uint16 words, as CuPy has no bfloat16). Keep ``CASE = ...`` at the end.
"""

from __future__ import annotations

from typing import Any

from profiler_report.model.base import Comparison, Size, Work
from profiler_report.model.manifest import Stage
from profiler_report.model.python_case import PythonCase
from profiler_report.util.dtypes import ITEMSIZE
from profiler_report.util.tensors import storage_dtype


class Relu2Case(PythonCase):
    """``y = 2 * max(x, 0)`` for ``n`` elements of float32 or bfloat16."""

    name = "NEW_CASE_NAME"  # the NVTX range of a profiled call is pr_<name>.<stage>
    title = "y = 2 * relu(x)"
    dims = ("n",)
    default_size = {"n": 1 << 28}  # noqa: RUF012 (1 GiB of float32: far past the L2)
    dtypes = ("float32", "bfloat16")
    array = "torch"
    compare_text = "bit-exact against 2 * relu(x) (exact in floating point)"
    validation_text = ("Random input in [-1, 1) (never zero), output poisoned with all-ones bytes before each "
                       "call, compared bit for bit with `2 * relu(x)` (the copy ceiling with `x`).")

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """Bytes read + written per call: ``2 * n * itemsize`` (the copy ceiling moves as much)."""
        return Work(2 * size["n"] * ITEMSIZE[dtype], 0 if stage.op == "copy" else 2 * size["n"])

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """Uniform in [-1, 1), never zero; bfloat16 as the top 16 bits of the float32 values."""
        x = cupy.random.default_rng(seed).random(size["n"], dtype=cupy.float32) * 2 - 1
        x[x == 0] = 0.5
        return (x.view(cupy.uint32) >> 16).astype(cupy.uint16) if dtype == "bfloat16" else x

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        return cupy.empty(size["n"], dtype=storage_dtype(dtype))

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Any:
        """The copy: the input; a stage: 2 * relu(x), in the input's own storage."""
        if stage.op == "copy":
            return inputs
        if inputs.dtype == cupy.uint16:  # bfloat16 words: compute in float32, then keep the top 16 bits
            x = (inputs.astype(cupy.uint32) << 16).view(cupy.float32)
            return ((cupy.maximum(x, 0) * 2).view(cupy.uint32) >> 16).astype(cupy.uint16)
        return cupy.maximum(inputs, 0) * 2

    def compare(self, cupy: Any, out: Any, ref: Any) -> Comparison:
        """Bit for bit, as integers of the element's width."""
        width = {2: cupy.uint16, 4: cupy.uint32}[out.dtype.itemsize]
        wrong = cupy.flatnonzero(out.view(width) != ref.view(width))
        if int(wrong.size) == 0:
            return Comparison(True)
        first = int(wrong[0])
        return Comparison(False, int(wrong.size), (first,), hex(int(ref.view(width)[first])),
                          hex(int(out.view(width)[first])))


CASE = Relu2Case()
