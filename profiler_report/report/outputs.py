"""The summary's formats (``summary --format``) and the data files ``render`` writes beside
index.html: one :class:`~profiler_report.util.writers.Writer` each. The csv and json writers name
the report's files (summary.csv, summary.json), so the printed summary and the report's files are
one text. Light to import: each writer imports what it needs when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from profiler_report.util.writers import Writer, Writers

if TYPE_CHECKING:
    from profiler_report.analysis import Analysis
    from profiler_report.model.base import Case


@dataclass(frozen=True)
class SummaryInput:
    """What a summary writer gets: the analysis of one ladder, the sanitizer's results
    (sanitizer.json's content, None without one), the captures' names (the Markdown heading),
    validation.json's entries (the cells of wrong stages), the case (its summary columns) and the
    origin of the numbers (GPU and mode, e.g. "NVIDIA H200, live run")."""

    analysis: Analysis
    sanitizer: dict[str, Any] | None = None
    captures: str = ""
    validation: list[dict[str, Any]] | None = None
    case: Case | None = None
    #: Where the numbers come from, for the agent text: the GPU and the provenance's mode.
    origin: str = ""


def _csv(s: SummaryInput) -> str:
    return str(s.analysis.summary.to_csv(index=False))


def _json(s: SummaryInput) -> str:
    from profiler_report.analysis.summary import summary_json

    return summary_json(s.analysis, s.sanitizer)  # null: not measured; never NaN or Infinity


def _markdown(s: SummaryInput) -> str:
    from profiler_report.report.cells import cell_rules
    from profiler_report.report.markdown import summary_markdown

    return summary_markdown(s.analysis, s.captures, cell_rules(s.validation), s.case)


def _table(s: SummaryInput) -> str:
    from profiler_report.report.text import summary_table

    return summary_table(s.analysis) + "\n"


def _agent(s: SummaryInput) -> str:
    from profiler_report.report.text import agent_text

    return agent_text(s.analysis, s.captures, s.origin, s.case)


SUMMARY: Writers[SummaryInput] = Writers(
    "summary",
    Writer("table", "", _table, "a readable table (the default on a terminal; csv when piped)"),
    Writer("csv", "summary.csv", _csv, "every column"),
    Writer("json", "summary.json", _json, "the schema of the report's summary.json (columns with units and "
           "sources, stages, expectations, deltas)"),
    Writer("markdown", "", _markdown, "the report's summary table, for $GITHUB_STEP_SUMMARY"),
    Writer("agent", "", _agent, "at most ~40 lines per ladder for a language model: each stage's change, "
           "verdict, limiter and next step"),
)
