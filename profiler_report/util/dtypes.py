"""Element types."""

from __future__ import annotations

DTYPES = ("float16", "float32", "float64", "int32")


#: C++ element type each dtype is instantiated with. float16 moves as raw 16-bit words: a
#: transpose only moves bits, and this keeps NVRTC free of cuda_fp16.h.
CXX_TYPES = {"float16": "unsigned short", "float32": "float", "float64": "double", "int32": "int"}


ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "int32": 4}
