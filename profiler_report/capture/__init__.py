"""Reading profiles: an ``.ncu-rep`` (through ncu_report, in a child process) or ncu's raw/details
CSV becomes one :class:`~.model.Capture` (a long table in base units), with its sidecar files
(timings, validation, provenance). Nothing here judges a metric: that is :mod:`profiler_report.analysis`.
"""
