"""profiler-report: turn Nsight Compute captures into a staged optimization report.

Pipeline (one module per stage): run -> profile -> extract -> analyze -> render / check.
"""

from . import _ncu

__version__ = "0.1.0"

# Import ncu_report before pandas or matplotlib load their C++ libraries (see _ncu's docstring).
_ncu.load()
