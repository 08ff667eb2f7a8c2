"""Row-wise softmax of a rows x cols matrix: a Python ladder (PyTorch -> torch.compile -> Triton).

The stages are functions of ``stages.py``; this file says what the tool needs to know about the
ladder: the size, the work model (one read and one write of the matrix per call: GB/s comes
from it), random input, the output buffer, the reference and how an output is compared with it.
Buffers are CuPy arrays (bfloat16 ones hold uint16 words, as CuPy has no bfloat16); the stage
functions receive them as torch tensors of the run's dtype.
"""

from __future__ import annotations

from typing import Any

from profiler_report.model.base import Comparison, Size, Work
from profiler_report.model.manifest import Stage
from profiler_report.model.python_case import PythonCase
from profiler_report.util.dtypes import ITEMSIZE
from profiler_report.util.tensors import storage_dtype

#: Relative error allowed against a float64 softmax of the same input, per dtype. float32: the
#: stages' exp and row sums in float32 stay within a few 1e-7. bfloat16: the decomposed eager
#: stage rounds x - max to bfloat16 before exp (half an ulp of an argument in [-16, -8) is 2^-5,
#: so exp's value moves by up to about 3 %), and every result is rounded to 8 significant bits.
RTOL = {"float32": 1e-4, "bfloat16": 2.0**-4}


class SoftmaxCase(PythonCase):
    """``y[i, :] = exp(x[i, :] - max x[i, :]) / sum exp(x[i, :] - max x[i, :])``."""

    name = "softmax"
    title = "Row-wise softmax"
    dims = ("rows", "cols")
    default_size = {"rows": 32768, "cols": 4096}  # noqa: RUF012 (512 MiB of float32: far past the 60 MiB L2)
    dtypes = ("float32", "bfloat16")
    array = "torch"
    compare_text = "within 1e-4 (float32) or 2^-4 (bfloat16) relative of a float64 softmax of the same input"
    validation_text = ("Standard normal input, the output poisoned with all-ones bytes (NaN) before each call, "
                       "compared element by element with a float64 softmax of the same values: relative error at "
                       "most 1e-4 in float32 and 2^-4 in bfloat16 (the decomposed eager stage rounds x - max to "
                       "bfloat16 before exp); the copy ceiling is compared bit for bit with its input.")

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """One read and one write of the matrix per call (the copy ceiling moves as much)."""
        n = size["rows"] * size["cols"]
        return Work(2 * n * ITEMSIZE[dtype], 0 if stage.op == "copy" else 4 * n)

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """Standard normal values (float32, or bfloat16 rounded from them)."""
        x = cupy.random.default_rng(seed).standard_normal((size["rows"], size["cols"]), dtype=cupy.float32)
        if dtype == "bfloat16":  # round to nearest even, kept as the top 16 bits of each float32
            bits = x.view(cupy.uint32)
            bits = bits + cupy.uint32(0x7FFF) + ((bits >> 16) & cupy.uint32(1))
            return (bits >> 16).astype(cupy.uint16)
        return x

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        return cupy.empty((size["rows"], size["cols"]), dtype=storage_dtype(dtype))

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Any:
        """The copy: the input itself; a softmax stage: float64 softmax of the input's values."""
        if stage.op == "copy":
            return inputs
        x = _float64(cupy, inputs)
        e = cupy.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def compare(self, cupy: Any, out: Any, ref: Any) -> Comparison:
        """Bit for bit against a reference of the output's own dtype (the copy), else within
        :data:`RTOL` relative of the float64 reference (NaN never passes)."""
        if ref.dtype == out.dtype:
            width = {2: cupy.uint16, 4: cupy.uint32}[out.dtype.itemsize]
            wrong = cupy.flatnonzero((out.view(width) != ref.view(width)).ravel())
        else:
            rtol = RTOL["bfloat16" if out.dtype == cupy.uint16 else "float32"]
            got = _float64(cupy, out)
            wrong = cupy.flatnonzero(~(cupy.abs(got - ref) <= rtol * cupy.abs(ref)).ravel())
        if int(wrong.size) == 0:
            return Comparison(True)
        first = divmod(int(wrong[0]), out.shape[1])
        return Comparison(False, int(wrong.size), first, repr(float(_float64(cupy, ref)[first])),
                          repr(float(_float64(cupy, out)[first])))


def _float64(cupy: Any, a: Any) -> Any:
    """Values as float64: uint16 words are bfloat16 (the top half of a float32)."""
    if a.dtype == cupy.uint16:
        return (a.astype(cupy.uint32) << 16).view(cupy.float32).astype(cupy.float64)
    return a.astype(cupy.float64)


CASE = SoftmaxCase()
