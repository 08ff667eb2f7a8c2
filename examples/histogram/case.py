"""Histogram of n bytes into 256 bins: a worked example of a profiler-report case folder.

Made with ``profiler-report new-case examples/histogram --name histogram`` and edited, using only
the public seam (:class:`profiler_report.model.base.Case`). The input is skewed (a normal
distribution around 128, sigma 16, clipped to 0..255), as an image's pixel values are: atomics
on the same bin collide, which is what the ladder's stages are about. Outputs are compared
exactly with ``cupy.bincount``.
"""

from __future__ import annotations

from typing import Any

from profiler_report.model.base import Case, Comparison, Launch, Size, Work
from profiler_report.model.manifest import Stage

BINS = 256
#: Threads per block and blocks of every histogram stage (grid-stride loops; kernels.cu agrees).
HIST_THREADS = 256
HIST_BLOCKS = 1024


class HistogramCase(Case):
    """``bins[v] = count of v in x`` for ``n`` bytes ``x``, 256 uint32 bins."""

    name = "histogram"
    title = "256-bin histogram of bytes"
    dims = ("n",)
    default_size = {"n": 1 << 28}  # noqa: RUF012 (256 MiB of input: far past the 60 MiB L2)
    dtypes = ("uint8",)
    compare_text = "exact against cupy.bincount"
    validation_text = ("Skewed random bytes (normal around 128, sigma 16), the 256 bins poisoned with all-ones "
                       "bytes and then zeroed before each launch (the kernels add into them), compared exactly "
                       "with `cupy.bincount`; the copy ceiling is compared byte for byte with its input.")

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """Bytes read + written: n read and 256 bins of 4 bytes written (the copy: n read, n written)."""
        n = size["n"]
        return Work(2 * n if stage.op == "copy" else n + BINS * 4)

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        """The copy: one thread per 16 bytes; a histogram stage: HIST_BLOCKS x HIST_THREADS."""
        if stage.op == "copy":
            return Launch((max(1, -(-size["n"] // (16 * 256))),), (256,))
        return Launch((HIST_BLOCKS,), (HIST_THREADS,))

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        import numpy as np

        return inputs, output, np.int64(size["n"])

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """Normal around 128 (sigma 16), clipped to 0..255: about 64 bins take nearly every value."""
        rng = cupy.random.default_rng(seed)
        values = rng.standard_normal(size["n"], dtype=cupy.float32) * 16 + 128
        return cupy.clip(cupy.rint(values), 0, 255).astype(cupy.uint8)

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        return cupy.empty(size["n"], dtype=cupy.uint8) if stage.op == "copy" else cupy.empty(BINS, dtype=cupy.uint32)

    def prepare_output(self, cupy: Any, stage: Stage, out: Any) -> None:
        """The histogram kernels add into their bins: zero them (after the poisoning)."""
        if stage.op != "copy":
            out.fill(0)

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Any:
        if stage.op == "copy":
            return inputs
        return cupy.bincount(inputs, minlength=BINS).astype(cupy.uint32)

    def compare(self, cupy: Any, out: Any, ref: Any) -> Comparison:
        """Exact: counts and bytes are integers."""
        wrong = cupy.flatnonzero(out != ref)
        if int(wrong.size) == 0:
            return Comparison(True)
        first = int(wrong[0])
        return Comparison(False, int(wrong.size), (first,), repr(ref[first].item()), repr(out[first].item()))


CASE = HistogramCase()
