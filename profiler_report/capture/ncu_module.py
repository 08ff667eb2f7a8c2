"""TODO docstring."""

from __future__ import annotations

import glob
import importlib
import sys
from types import ModuleType

#: Where an Nsight Compute install keeps its copy of ncu_report (newest version first).
BUNDLED_GLOBS = ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python")


def load() -> ModuleType | None:
    """The ``ncu_report`` module (the PyPI package, else the copy bundled with ncu), or None."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for pattern in BUNDLED_GLOBS:
        for extras in sorted(glob.glob(pattern), reverse=True):
            sys.path.insert(0, extras)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(extras)
    return None


def available() -> bool:
    """Whether ncu_report can be imported here, without importing it (it must not share a process
    with pandas or CuPy: see :mod:`profiler_report.capture.reader_child`)."""
    import importlib.util
    import os

    if importlib.util.find_spec("ncu_report") is not None:
        return True
    return any(os.path.isfile(os.path.join(d, "ncu_report.py"))
               for pattern in BUNDLED_GLOBS for d in glob.glob(pattern))
