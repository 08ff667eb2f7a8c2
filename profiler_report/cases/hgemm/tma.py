"""Tensor maps for the TMA stages of the bf16 GEMM: the 128-byte ``CUtensorMap`` that the driver's
``cuTensorMapEncodeTiled`` writes on the host, handed to the kernel by value.

A map describes one operand (A: M x ld, or B: N x ld, row-major 16-bit words, row stride ``ld``
words) and the box one copy moves: :data:`BOX_COLS` elements (128 bytes, the width of the
128-byte swizzle) by ``box_rows`` rows. Copies that reach past the matrix's rows or columns fill
the rest of the box with zeros, so the kernels need no edge code for their loads.

The map travels as a one-element NumPy array of :data:`TMA_MAP` (CuPy passes a size-one host
array by value), matching the kernel's ``const __grid_constant__ TmaMap`` parameter in
kernels/hgemm/hgemm.cu. Encoding is a pure host call (no GPU work, no synchronisation), cheap
enough to repeat per launch.
"""

from __future__ import annotations

import ctypes
from typing import Any

from profiler_report.errors import InputError, NoGpuError

#: The kernel parameter type: 16 little-endian 64-bit words (CUtensorMap, 64-byte aligned).
TMA_MAP_BYTES = 128
#: Elements per box row: 64 bf16 = 128 bytes, the span of the 128-byte swizzle.
BOX_COLS = 64

# cuda.h enumerators (CUDA 12 and 13): the words are copied, never converted, so UINT16 serves
# bf16; zeros fill out-of-bounds elements (FLOAT_OOB_FILL_NONE).
_DATA_TYPE_UINT16 = 1
_INTERLEAVE_NONE = 0
_SWIZZLE_128B = 3
_L2_PROMOTION_256B = 3
_OOB_FILL_NONE = 0


def map_dtype() -> Any:
    """The NumPy type of a tensor map: one field ``words``, 16 uint64, 128 bytes."""
    import numpy as np

    return np.dtype({"names": ["words"], "formats": [(np.uint64, (16,))], "itemsize": TMA_MAP_BYTES})


def _driver() -> Any:
    """``libcuda``'s encoder (the driver, not the runtime: CuPy does not wrap it).

    Raises:
        NoGpuError: no CUDA driver library on this machine.
    """
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise NoGpuError(f"the TMA stages need the CUDA driver library (libcuda.so.1): {exc}",
                         "run the hgemm case on a machine with an NVIDIA driver") from exc
    fn = lib.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    return fn


def encode(operand: Any, box_rows: int) -> Any:
    """The tensor map of ``operand`` (a C-contiguous rows x ld CuPy array of 16-bit words, A or B
    with its zero padding), boxes of ``box_rows`` x :data:`BOX_COLS`, 128-byte swizzle, as a
    one-element array of :func:`map_dtype`.

    Raises:
        InputError: the driver refused the map (its CUresult), e.g. an address not 16-byte aligned
            or a row stride that is not a multiple of 16 bytes.
    """
    import numpy as np

    rows, ld = operand.shape
    ptr = int(operand.data.ptr)
    words = (ctypes.c_uint64 * 16)()
    dims = (ctypes.c_uint64 * 2)(ld, rows)  # innermost first
    strides = (ctypes.c_uint64 * 1)(ld * 2)  # bytes from one row to the next
    box = (ctypes.c_uint32 * 2)(BOX_COLS, box_rows)
    steps = (ctypes.c_uint32 * 2)(1, 1)
    rc = _driver()(ctypes.byref(words), _DATA_TYPE_UINT16, 2, ctypes.c_void_p(ptr), dims, strides, box, steps,
                   _INTERLEAVE_NONE, _SWIZZLE_128B, _L2_PROMOTION_256B, _OOB_FILL_NONE)
    if rc != 0:
        raise InputError(f"cuTensorMapEncodeTiled refused a {rows} x {ld} map at {ptr:#x} (CUresult {rc})",
                         "operands must start 16-byte aligned with rows a multiple of 16 bytes apart")
    return np.frombuffer(bytes(words), dtype=map_dtype())
