"""``python -m profiler_report``: the same command line as ``profiler-report``."""

from .cli import entry

entry()
