"""Analysis: a capture's launches as stages, their headline metrics, verdicts and rule changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiler_report.analysis.findings import rule_changes
from profiler_report.analysis.stages import assign_stages
from profiler_report.analysis.summary import add_timings, missing_metrics, stall_table, summarize
from profiler_report.analysis.verdicts import deltas, judge_expectations, speed_column, stage_verdict
from profiler_report.capture.model import Capture
from profiler_report.cases.manifest import Manifest


@dataclass
class Analysis:
    """Everything the report and the checks need, as plain tables."""

    summary: pd.DataFrame
    stalls: pd.DataFrame
    deltas: pd.DataFrame
    expectations: pd.DataFrame
    rule_changes: pd.DataFrame
    rules: pd.DataFrame
    verdicts: dict[str, str]
    missing: list[tuple[str, str]]
    stages: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)


def analyze(capture: Capture, manifest: Manifest | None = None, labels: list[tuple[str, str]] | None = None,
            timings: list[dict[str, Any]] | None = None) -> Analysis:
    """Run every analysis on a capture. ``manifest`` supplies expectations for our own stages."""
    stages = assign_stages(capture, labels, manifest)
    summary = summarize(capture, stages)
    if timings:
        summary = add_timings(summary, timings)
    only = summary[summary["role"] == "stage"].reset_index(drop=True)
    col = speed_column(only)
    verdicts = {}
    for i in range(len(only)):
        verdicts[only.iloc[i]["stage"]] = stage_verdict(only.iloc[i - 1] if i else None, only.iloc[i], col)
    expectations = judge_expectations(summary, list(manifest.stages) if manifest else [])
    rules = capture.rules.merge(stages[["launch_id", "stage"]], on="launch_id", how="inner") \
        if not capture.rules.empty else capture.rules.assign(stage=[])
    return Analysis(summary, stall_table(capture, stages), deltas(summary), expectations,
                    rule_changes(capture, stages), rules, verdicts, missing_metrics(capture), stages)
