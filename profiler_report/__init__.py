"""profiler-report: turn Nsight Compute captures into a staged optimization report.

Pipeline: capture -> analysis -> report / gate (see the README's layout). From Python::

    import profiler_report
    prof = profiler_report.load("reports/h200/profile.ncu-rep")
    prof.summary()        # per-stage table (pandas), units in .attrs["units"]

:func:`load` is :func:`profiler_report.api.load` (imported on first use: the command line
imports this package and stays light).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from profiler_report.api import Profile

__version__ = "0.1.0"
__all__ = ["__version__", "load"]


def load(path: Any, stages: Any = None) -> Profile:
    """Read and analyze a capture: see :func:`profiler_report.api.load` (same arguments, same errors)."""
    from profiler_report.api import load as _load

    return _load(path, stages)
