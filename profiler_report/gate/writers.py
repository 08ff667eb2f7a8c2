"""``check --format``: one :class:`~profiler_report.util.writers.Writer` per format of the gate's
results (table, json, markdown), on :class:`CheckOutcome`. The texts are :mod:`.output`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from profiler_report.gate.output import results_json, results_markdown, results_summary, results_table
from profiler_report.gate.rules import Result
from profiler_report.util.writers import Writer, Writers


@dataclass(frozen=True)
class CheckOutcome:
    """One ``check``: the results, ``--missing`` ("fail" or "warn"), the exit code, the capture,
    thresholds and baseline paths (baseline None without one), what makes capture and baseline
    not comparable, and the run's identity (:func:`~profiler_report.analysis.compare.run_identity`)."""

    results: list[Result]
    missing: str
    exit_code: int
    capture: str
    thresholds: str | None
    baseline: str | None = None
    not_comparable: list[str] = field(default_factory=list)
    run: dict[str, Any] = field(default_factory=dict)


def _table(o: CheckOutcome) -> str:
    return "\n".join([results_table(o.results), *results_summary(o.results, o.missing)]) + "\n"


def _json(o: CheckOutcome) -> str:
    doc = results_json(o.results, capture=o.capture, thresholds=o.thresholds, baseline=o.baseline, missing=o.missing,
                       not_comparable=o.not_comparable, run=o.run, exit_code=o.exit_code)
    return json.dumps(doc, indent=2) + "\n"


def _markdown(o: CheckOutcome) -> str:
    return results_markdown(o.results, o.missing, o.capture, str(o.thresholds))


CHECK: Writers[CheckOutcome] = Writers(
    "check",
    Writer("table", "", _table, "plain text"),
    Writer("json", "", _json, "for scripts"),
    Writer("markdown", "", _markdown, "for $GITHUB_STEP_SUMMARY or a PR comment"),
)
