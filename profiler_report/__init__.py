"""profiler-report: turn Nsight Compute captures into a staged optimization report.

Pipeline (one module per stage): run -> profile -> extract -> analyze -> render / check.
"""

__version__ = "0.1.0"
