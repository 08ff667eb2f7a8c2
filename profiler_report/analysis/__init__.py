"""Analysis: a capture's launches as stages, their headline metrics, verdicts and rule changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiler_report.analysis.findings import rule_changes
from profiler_report.analysis.launch_groups import kernel_shares, stage_wide
from profiler_report.analysis.stages import assign_stages
from profiler_report.analysis.summary import add_timings, missing_metrics, stall_table, summarize
from profiler_report.analysis.verdicts import (
    check_expected_ids,
    deltas,
    judge_expectations,
    speed_column,
    stage_verdict,
)
from profiler_report.capture.model import Capture
from profiler_report.model.manifest import Manifest, Stage


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
    #: Stage id -> its manifest entry (title, change, expected effects): the case's, or those of
    #: ``--expect FILE`` for a capture made elsewhere; {} when neither is known.
    stage_info: dict[str, Stage] = field(repr=False, default_factory=dict)
    #: One row per launch of every stage (:func:`~profiler_report.analysis.launch_groups.kernel_shares`):
    #: its kernel and its share of the stage's time, for stages of several launches.
    kernels: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)


def analyze(capture: Capture, manifest: Manifest | None = None, labels: list[tuple[str, str]] | None = None,
            timings: list[dict[str, Any]] | None = None, ceilings: list[tuple[str, str]] | None = None,
            expect: tuple[Stage, ...] | None = None, name_by_file: bool = False) -> Analysis:
    """Run every analysis on a capture. ``manifest`` supplies expectations for our own stages;
    ``expect`` (``--expect FILE``) for the labelled stages of a capture made elsewhere; ``ceilings``
    (``--ceiling``) marks reference launches and ``name_by_file`` names repeated own stages by their file
    (see :func:`~profiler_report.analysis.stages.assign_stages`).

    Raises:
        InputError: see :func:`~profiler_report.analysis.stages.assign_stages`; or an ``expect``
            stage is no stage of the capture.
    """
    stages = assign_stages(capture, labels, manifest, ceilings, name_by_file)
    summary = summarize(capture, stages)
    if timings:
        summary = add_timings(summary, timings)
    only = summary[summary["role"] == "stage"].reset_index(drop=True)
    expected = list(expect) if expect is not None else list(manifest.stages) if manifest else []
    if expect is not None:
        check_expected_ids(expected, list(only["stage"]))
    wide = capture.wide()
    expectations = judge_expectations(summary, expected, stage_wide(wide, stages))
    col = speed_column(only)
    verdicts = {}
    for i in range(len(only)):
        sid = only.iloc[i]["stage"]
        mine = expectations[expectations["stage"] == sid]
        verdicts[sid] = stage_verdict(only.iloc[i - 1] if i else None, only.iloc[i], col,
                                      list(zip(mine["metric"], mine["verdict"], strict=True)))
    rules = capture.rules.merge(stages[["launch_id", "stage"]], on="launch_id", how="inner") \
        if not capture.rules.empty else capture.rules.assign(stage=[])
    return Analysis(summary, stall_table(capture, stages), deltas(summary), expectations,
                    rule_changes(capture, stages), rules, verdicts, missing_metrics(capture), stages,
                    {st.id: st for st in expected}, kernel_shares(stages, wide))
