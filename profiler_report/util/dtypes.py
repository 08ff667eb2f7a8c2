"""The element types a case runs in: each dtype's name, its C++ type in the kernels and its size
in bytes (``ITEMSIZE``), for every dtype a case may name (``ALL_DTYPES``: the floats, then integer types).
"""

from __future__ import annotations

#: The floating-point dtypes the transpose (and every case by default) runs in.
DTYPES = ("float16", "float32", "float64")


#: C++ element type each dtype is instantiated with. float16 moves as raw 16-bit words: a
#: transpose only moves bits, and this keeps NVRTC free of cuda_fp16.h.
CXX_TYPES = {"float16": "unsigned short", "float32": "float", "float64": "double"}


#: Integer dtypes a user's case may run in (``Case.dtypes``), with their C++ element types.
INT_CXX_TYPES = {"uint8": "unsigned char", "int32": "int", "uint32": "unsigned int"}

#: Dtypes CuPy lacks: the tool's buffers hold them as raw words of this CuPy dtype (CuPy has no
#: bfloat16), viewed as the dtype itself by Python stage functions (:mod:`profiler_report.util.tensors`).
WORD_STORAGE = {"bfloat16": "uint16"}

#: C++ element type of those dtypes in a kernel: the raw 16-bit words (the kernel converts them
#: itself, e.g. with PTX ``cvt``, so NVRTC needs no cuda_bf16.h); the hgemm case runs in bfloat16.
STORAGE_CXX_TYPES = {"bfloat16": "unsigned short"}

#: Every dtype ``--dtype`` accepts: a case says which of them it runs in.
ALL_DTYPES = (*DTYPES, *INT_CXX_TYPES, *WORD_STORAGE)

#: dtype -> C++ element type, for every dtype of :data:`ALL_DTYPES`.
ALL_CXX_TYPES = {**CXX_TYPES, **INT_CXX_TYPES, **STORAGE_CXX_TYPES}


ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "uint8": 1, "int32": 4, "uint32": 4, "bfloat16": 2}
