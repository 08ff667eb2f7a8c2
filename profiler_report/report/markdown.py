"""The per-stage summary as GitHub-flavoured Markdown (``summary --format markdown``), for a CI
job to append to ``$GITHUB_STEP_SUMMARY`` or post as a pull-request comment.

The same columns, cells and verdicts as the report's summary table
(:func:`~profiler_report.report.cells.summary_cells`); each header names its unit.
"""

from __future__ import annotations

from profiler_report.analysis import Analysis
from profiler_report.metrics import COLUMNS_BY_NAME
from profiler_report.model.base import Case
from profiler_report.report.cells import CellRules, summary_cells
from profiler_report.util.fmt import markdown_table


def _header(column: str) -> str:
    """The page's label, with the unit unless the label already names it."""
    col = COLUMNS_BY_NAME[column]
    return f"{col.label} ({col.unit})" if col.unit and col.unit not in col.label else col.label


def summary_markdown(analysis: Analysis, capture: str, rules: CellRules | None = None,
                     case: Case | None = None) -> str:
    """A heading naming ``capture``, the summary table (``case``'s summary columns, the base
    case's for a foreign capture; one row per stage, ceiling rows in italics) and a line on where
    the figures come from."""
    cols, rows = summary_cells(analysis, rules or CellRules(), (case or Case).summary_columns)
    body = []
    for r in rows:
        stage = f"_{r['stage']}_" if r["role"] == "ceiling" else f"**{r['stage']}**"
        body.append([stage, *[c.text for c in r["cells"]], r["verdict"]])
    table = markdown_table(["stage", *[_header(c) for c in cols], "verdict"], body,
                           ["l", *["r"] * len(cols), "l"])
    timed = "event_gbps" in analysis.summary and analysis.summary["event_gbps"].notna().any()
    note = ("GB/s and % columns: event-timed medians (timings.json); " if timed else
            "No event timings beside the capture (timings.json): speed columns are not measured; ") + \
        "duration: one profiled launch under ncu; every other column: Nsight Compute counters " \
        "(sources: `profiler-report summary --format json`)."
    return f"### profiler-report summary: `{capture}`\n\n{table}\n\n{note}\n"
