"""NVRTC through ctypes: compile a CUDA source offline (no GPU, no CuPy) and read ptxas's report.

The library is the one the live runs use: the pip wheel ``nvidia-cuda-nvrtc`` (``nvidia/cu13/lib``,
or ``nvidia/cuda_nvrtc/lib`` of the CUDA 12 wheels), else a CUDA toolkit's (``$CUDA_HOME/lib64``,
``/usr/local/cuda/lib64``), else the loader's search path. Its builtins library is loaded first so
NVRTC finds it without ``LD_LIBRARY_PATH``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from profiler_report.errors import NvrtcNotFoundError


@dataclass(frozen=True)
class EntryReport:
    """ptxas's report on one kernel: registers per thread, spill bytes, static shared memory,
    stack frame bytes (all from ``-Xptxas -v``)."""

    registers: int
    spill_stores: int
    spill_loads: int
    shared_bytes: int
    stack_bytes: int


@dataclass(frozen=True)
class Compiled:
    """One compile: whether it succeeded, NVRTC's log, per name expression its mangled name, and
    the PTX (its ``.file`` lines are the line information's file names)."""

    ok: bool
    log: str
    lowered: dict[str, str]
    ptx: str = ""

    def entries(self) -> dict[str, EntryReport]:
        """ptxas's report per mangled kernel name (empty when the compile failed)."""
        return parse_ptxas(self.log)


def _candidate_dirs() -> list[Path]:
    dirs: list[Path] = []
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        dirs += [Path(root) / "cu13" / "lib", Path(root) / "cuda_nvrtc" / "lib"]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            dirs.append(Path(home) / "lib64")
    return dirs


@cache
def nvrtc_library() -> ctypes.CDLL:
    """The NVRTC library (loaded once).

    Raises:
        NvrtcNotFoundError: none in the wheel, the toolkit folders or the loader's path.
    """
    for d in _candidate_dirs():
        libs = sorted(d.glob("libnvrtc.so*")) if d.is_dir() else []
        libs = [p for p in libs if "alt" not in p.name]
        if not libs:
            continue
        for builtins in sorted(d.glob("libnvrtc-builtins.so*")):
            if "alt" not in builtins.name:
                ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
                break
        return ctypes.CDLL(str(libs[-1]))
    found = ctypes.util.find_library("nvrtc")
    if found:
        return ctypes.CDLL(found)
    raise NvrtcNotFoundError("NVRTC (libnvrtc) not found for the offline compile")


def compile_source(source: str, name: str, names: list[str], arch: str = "sm_90",
                   options: tuple[str, ...] = ("-std=c++17", "-lineinfo")) -> Compiled:
    """Compile ``source`` (its file name ``name`` appears in the log's error lines) for ``arch``
    with ptxas's verbose report, instantiating the C++ name expressions ``names``.

    Returns:
        :class:`Compiled`; ``ok`` False with NVRTC's log when the source does not compile.

    Raises:
        NvrtcNotFoundError: no NVRTC library.
    """
    lib = nvrtc_library()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None) != 0:
        return Compiled(False, "nvrtcCreateProgram failed", {})
    try:
        for n in names:
            lib.nvrtcAddNameExpression(prog, n.encode())
        opts = [o.encode() for o in (*options, f"--gpu-architecture={arch}", "-default-device", "-Xptxas=-v")]
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(max(size.value, 1))
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        lowered: dict[str, str] = {}
        if rc == 0:
            for n in names:
                out = ctypes.c_char_p()
                if lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)) == 0 and out.value:
                    lowered[n] = out.value.decode()
        return Compiled(rc == 0, log, lowered, _ptx(lib, prog) if rc == 0 else "")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _ptx(lib: ctypes.CDLL, prog: ctypes.c_void_p) -> str:
    size = ctypes.c_size_t()
    if lib.nvrtcGetPTXSize(prog, ctypes.byref(size)) != 0:
        return ""
    buf = ctypes.create_string_buffer(max(size.value, 1))
    lib.nvrtcGetPTX(prog, buf)
    return buf.value.decode(errors="replace")


_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '\w+'(?P<body>.*?)(?=Compiling entry function|\Z)",
                    re.S)


def _num(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else 0


def parse_ptxas(log: str) -> dict[str, EntryReport]:
    """ptxas ``-v`` lines -> {mangled kernel name: :class:`EntryReport`}."""
    out = {}
    for m in _ENTRY.finditer(log):
        body = m.group("body")
        out[m.group("name")] = EntryReport(
            registers=_num(r"Used (\d+) registers", body),
            spill_stores=_num(r"(\d+) bytes spill stores", body),
            spill_loads=_num(r"(\d+) bytes spill loads", body),
            shared_bytes=_num(r"(\d+) bytes smem", body),
            stack_bytes=_num(r"(\d+) bytes stack frame", body))
    return out
