"""A profiler-report case: y = 2 * x over n elements, in three stages (see stages.toml).

Made by ``profiler-report new-case``. The tool asks this class for everything it needs to know
about the ladder: the size's dimensions, the work model (bytes per launch: GB/s comes from it),
each stage's launch shape and arguments, random input, the output buffer, the reference and how
an output is compared with it. Edit the kernels, the stages and this file into your own ladder;
keep ``CASE = ...`` at the end.
"""

from __future__ import annotations

from typing import Any

from profiler_report.model.base import Case, Comparison, Launch, Size, Work
from profiler_report.model.manifest import Stage

ITEMSIZE = {"float32": 4, "float64": 8}
#: Threads per block of every stage.
BLOCK = 256
#: Elements per thread of `launch = "per_thread"` (as #define PER_THREAD in kernels.cu).
PER_THREAD = 16


class ScaleCase(Case):
    """``y = 2 * x`` for ``n`` elements of float32 or float64."""

    name = "NEW_CASE_NAME"  # the NVTX range of a profiled launch is pr_<name>.<stage>
    title = "y = 2 * x"
    dims = ("n",)
    default_size = {"n": 1 << 28}  # noqa: RUF012
    dtypes = ("float32", "float64")
    compare_text = "bit-exact against 2 * x (doubling is exact in floating point)"
    validation_text = ("Random input in [1, 2), output poisoned with all-ones bytes before each launch, "
                       "compared bit for bit with `2 * x` (the copy ceiling with `x`).")

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """Bytes read + written per launch: ``2 * n * itemsize`` (the copy ceiling moves as much)."""
        return Work(2 * size["n"] * ITEMSIZE[dtype], 0 if stage.op == "copy" else size["n"])

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        """One 1-D block of BLOCK threads per BLOCK threads' worth of elements."""
        per_thread = {"per_thread": PER_THREAD, "vector": 16 // ITEMSIZE[dtype]}.get(stage.launch, 1)
        threads = -(-size["n"] // per_thread)
        return Launch((-(-threads // BLOCK),), (BLOCK,))

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        import numpy as np

        return inputs, output, np.int64(size["n"])

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """Uniform values in [1, 2): random, never zero."""
        rng = cupy.random.default_rng(seed)
        return (rng.random(size["n"], dtype=cupy.float64) + 1).astype(dtype)

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        return cupy.empty(size["n"], dtype=dtype)

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Any:
        return inputs if stage.op == "copy" else inputs * 2

    def compare(self, cupy: Any, out: Any, ref: Any) -> Comparison:
        """Bit for bit, as integers of the element's width."""
        width = {4: cupy.uint32, 8: cupy.uint64}[out.dtype.itemsize]
        wrong = cupy.flatnonzero(out.view(width) != ref.view(width))
        if int(wrong.size) == 0:
            return Comparison(True)
        first = int(wrong[0])
        return Comparison(False, int(wrong.size), (first,), repr(ref[first].item()), repr(out[first].item()))


CASE = ScaleCase()
