"""``diff --format``: one :class:`~profiler_report.util.writers.Writer` per format of a per-stage
comparison (text, csv, json), on :class:`DiffOutcome`; the table is :func:`.compare.diff_table`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from profiler_report.analysis.compare import diff_markdown, diff_table, regressions
from profiler_report.util.writers import Writer, Writers


@dataclass(frozen=True)
class DiffOutcome:
    """One ``diff``: the frame of :func:`~profiler_report.analysis.compare.diff_summaries`, the old
    and new captures' names, the tolerance (a fraction), what makes them not comparable, and
    whether every compared value is listed (``--all``) or only the flagged ones."""

    frame: pd.DataFrame
    old: str
    new: str
    tolerance: float
    not_comparable: list[str] = field(default_factory=list)
    show_all: bool = False


def _text(d: DiffOutcome) -> str:
    flagged = d.frame[d.frame["flagged"]]
    table = [diff_table(d.frame, flagged_only=not d.show_all)] if d.show_all or len(flagged) else []
    line = (f"diff: {len(flagged)} of {len(d.frame)} compared values flagged beyond {d.tolerance:.0%}, "
            f"{len(regressions(d.frame))} worse in a gated metric" + ("" if d.show_all else " (--all lists every one)"))
    return "\n".join([*table, line]) + "\n"


def _csv(d: DiffOutcome) -> str:
    return str(d.frame.to_csv(index=False))


def _json(d: DiffOutcome) -> str:
    return json.dumps({"old": d.old, "new": d.new, "tolerance": d.tolerance, "not_comparable": d.not_comparable,
                       "regressions": len(regressions(d.frame)),
                       "rows": json.loads(d.frame.to_json(orient="records"))}, indent=2) + "\n"


def _markdown(d: DiffOutcome) -> str:
    return diff_markdown(d.frame, d.old, d.new, d.tolerance, d.show_all)


DIFF: Writers[DiffOutcome] = Writers(
    "diff",
    Writer("text", "", _text, "the flagged values as a table"),
    Writer("csv", "", _csv, "every compared value"),
    Writer("json", "", _json, "for scripts"),
    Writer("markdown", "", _markdown, "for $GITHUB_STEP_SUMMARY or a pull-request comment"),
)
