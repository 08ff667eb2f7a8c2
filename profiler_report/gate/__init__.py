"""The regression gate: a thresholds file parsed into rules, judged on a loaded run.

Pipeline: :mod:`.grammar` (the TOML file and the rule grammar) -> :mod:`.rules` (one pure
``Rule.evaluate`` per rule) -> :mod:`.evaluate` (rules applied to a run's stages) -> :mod:`.output`
(table, JSON, JUnit, Markdown). ``profiler-report check`` is this package on a run from
:func:`profiler_report.analysis.run.load_run`. Nothing here imports the HTML layer or the GPU side.
"""

from profiler_report.analysis.compare import fmt_value
from profiler_report.gate.evaluate import check_run, counts, exit_code, validation_failures
from profiler_report.gate.grammar import load_thresholds, parse_rule, parse_thresholds, parse_thresholds_data
from profiler_report.gate.output import (
    junit_tree,
    results_json,
    results_markdown,
    results_summary,
    results_table,
    write_atomic,
    write_junit,
)
from profiler_report.gate.rules import Band, Result, Rule

__all__ = [
    "Band", "Result", "Rule", "check_run", "counts", "exit_code", "fmt_value", "junit_tree", "load_thresholds",
    "parse_rule", "parse_thresholds", "parse_thresholds_data", "results_json", "results_markdown", "results_summary",
    "results_table", "validation_failures", "write_atomic", "write_junit",
]
