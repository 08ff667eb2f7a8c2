"""CuPy buffers as PyTorch tensors and back, without a copy (DLPack), for Python stages.

The tool's buffers are CuPy arrays (poisoned, rotated and copied by the generic pipeline); a
Python stage's function receives them as ``torch.Tensor`` views of the run's dtype. bfloat16,
which CuPy lacks, is stored as uint16 words (:data:`~profiler_report.util.dtypes.WORD_STORAGE`)
and viewed as ``torch.bfloat16``. torch is imported on first use: only GPU processes call these.
"""

from __future__ import annotations

from typing import Any

from profiler_report.util.dtypes import WORD_STORAGE


def storage_dtype(dtype: str) -> str:
    """The CuPy dtype a buffer of ``dtype`` elements is allocated with: uint16 for bfloat16,
    else ``dtype`` itself."""
    return WORD_STORAGE.get(dtype, dtype)


def as_tensor(array: Any, dtype: str) -> Any:
    """``array`` (a CuPy array, or already a tensor) as a ``torch.Tensor`` of ``dtype`` sharing
    its memory; other values (a scalar, None) as they are."""
    import torch

    if isinstance(array, torch.Tensor):
        return array
    if not hasattr(array, "__dlpack__"):
        return array
    if dtype in WORD_STORAGE:  # int16 through DLPack: every torch version takes it (uint16 not)
        return torch.from_dlpack(array.view("int16")).view(getattr(torch, dtype))
    return torch.from_dlpack(array)


def as_array(cupy: Any, value: Any) -> Any:
    """A tensor (or any DLPack producer) as a CuPy array sharing its memory; a bfloat16 tensor as
    its uint16 words (the tool's storage for bfloat16)."""
    if isinstance(value, cupy.ndarray):
        return value
    import torch

    if isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16:
        return cupy.from_dlpack(value.view(torch.int16)).view(cupy.uint16)
    return cupy.from_dlpack(value)
