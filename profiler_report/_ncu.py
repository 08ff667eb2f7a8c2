"""Locate and import NVIDIA's ``ncu_report`` module, before anything else loads C++ libraries.

ncu_report's native library segfaults in ``IMetric.unit()`` when certain C++ extensions are
loaded before it: seen with pandas 3 + pyarrow on the H200 machine (CPython 3.12, the copy bundled
with ncu 2025.3.1) and with matplotlib's kiwisolver here (CPython 3.11, PyPI ncu-report
2025.3.1). Importing ncu_report first avoids it, so ``profiler_report/__init__.py`` calls
:func:`load` before any of its modules import pandas or matplotlib. This module imports nothing
heavy on purpose.
"""

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
