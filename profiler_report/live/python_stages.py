"""Calling a Python stage's function on the tool's buffers (GPU side).

The buffers stay CuPy arrays (poisoned, rotated, copied by the generic pipeline); the function
gets them as the case's :attr:`~profiler_report.model.python_case.PythonCase.array` (torch
tensors through DLPack: no copy, the same default stream, so the event timing and the queue
hold of :mod:`profiler_report.live.gpu` cover its kernels as they cover a CUDA stage's).
"""

from __future__ import annotations

from typing import Any

from profiler_report.errors import CaseError
from profiler_report.model.base import Case, Step
from profiler_report.model.manifest import Stage
from profiler_report.util.tensors import as_array, as_tensor


def call_function(case: Case, step: Step, dtype: str) -> Any:
    """``step.call(*step.args)``, the arrays given as the case's array kind; its return value.

    Raises:
        CaseError: the function raised (in a user's case: its file and line).
    """
    assert step.call is not None and step.kernel is not None
    args = step.args
    if getattr(case, "array", "cupy") == "torch":
        args = tuple(as_tensor(a, dtype) for a in args)
    return case.guarded(step.kernel.function or "stage function", step.kernel, step.call, *args)


def adopt_result(cupy: Any, case: Case, stage: Stage, out: Any, result: Any) -> None:
    """A returned output copied into the poisoned output buffer ``out`` (validation only).

    Raises:
        CaseError: the value is not an array of ``out``'s shape.
    """
    try:
        got = as_array(cupy, result)
    except Exception as exc:  # not a DLPack producer
        raise CaseError(f"stage {stage.id}: {stage.function}() returned a {type(result).__name__}, not an array",
                        "return the output tensor, or write into the output argument and return None") from exc
    if tuple(got.shape) != tuple(out.shape) or got.dtype.itemsize != out.dtype.itemsize:
        raise CaseError(f"stage {stage.id}: {stage.function}() returned shape {tuple(got.shape)} ({got.dtype}), "
                        f"but the output is {tuple(out.shape)} ({out.dtype})",
                        "return an output of the case's output shape and dtype")
    cupy.copyto(out, got.view(out.dtype) if got.dtype != out.dtype else got)
