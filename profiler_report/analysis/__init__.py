"""Analysis: a capture's launches as stages, their headline metrics, verdicts and rule changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiler_report.analysis.assessment import assess
from profiler_report.analysis.coverage import Coverage, coverage
from profiler_report.analysis.findings import rule_changes
from profiler_report.analysis.launch_groups import kernel_shares, stage_wide
from profiler_report.analysis.roofline import roofline_table
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
from profiler_report.model.ranges import own_range


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
    #: Which of its case's stages the capture holds (None: no case, or ``--stage`` labels).
    coverage: Coverage | None = None
    #: Stage -> why it is not compared with the stage before it (a missing stage between them,
    #: another capture of a mixed ladder): no step ratio, verdict or expected effect spans it.
    breaks: dict[str, str] = field(default_factory=dict)
    #: A ladder of captures that are not comparable (``--allow-mixed``): what differs, as the
    #: provenance shows it (key -> "value (file), value (file)"); {} otherwise.
    mixed: dict[str, str] = field(default_factory=dict)
    #: Per summary row: the bottleneck class from the speed-of-light throughputs
    #: (:func:`~profiler_report.analysis.assessment.assess`).
    assessment: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    #: One row per launch: achieved FLOP/s, intensities, roofs (:func:`~.roofline.roofline_table`).
    roofline: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    #: One row per launch of every stage (:func:`~profiler_report.analysis.launch_groups.kernel_shares`):
    #: its kernel and its share of the stage's time, for stages of several launches.
    kernels: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)


def analyze(capture: Capture, manifest: Manifest | None = None, labels: list[tuple[str, str]] | None = None,
            timings: list[dict[str, Any]] | None = None, ceilings: list[tuple[str, str]] | None = None,
            expect: tuple[Stage, ...] | None = None, name_by_file: bool = False, case_name: str = "") -> Analysis:
    """Run every analysis on a capture. ``manifest`` supplies expectations for our own stages;
    ``expect`` (``--expect FILE``) for the labelled stages of a capture made elsewhere; ``ceilings``
    (``--ceiling``) marks reference launches and ``name_by_file`` names repeated own stages by their file
    (see :func:`~profiler_report.analysis.stages.assign_stages`). With a ``manifest`` and no
    ``labels``, :attr:`Analysis.coverage` (case ``case_name``) lists the case's stages the capture
    lacks, and a stage after such a gap gets no step: no speed verdict, delta or expected effect
    against the stage before it.

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
    cover = _coverage(capture, summary, manifest, case_name) if manifest is not None and not labels else None
    wide = capture.wide()
    expectations = judge_expectations(summary, expected, stage_wide(wide, stages))
    col = speed_column(only)
    verdicts = {}
    for i in range(len(only)):
        sid = only.iloc[i]["stage"]
        mine = expectations[expectations["stage"] == sid]
        verdicts[sid] = stage_verdict(only.iloc[i - 1] if i else None, only.iloc[i], col,
                                      list(zip(mine["metric"], mine["verdict"], strict=True)))
    steps = deltas(summary)
    rules = capture.rules.merge(stages[["launch_id", "stage"]], on="launch_id", how="inner") \
        if not capture.rules.empty else capture.rules.assign(stage=[])
    out = Analysis(summary, stall_table(capture, stages), steps, expectations,
                   rule_changes(capture, stages), rules, verdicts, missing_metrics(capture), stages,
                   {st.id: st for st in expected}, cover, assessment=assess(capture, summary),
                   roofline=roofline_table(capture, summary), kernels=kernel_shares(stages, wide))
    if cover is not None and cover.gaps:
        break_steps(out, {s: gap_reason(gap) for s, gap in cover.gaps.items()})
    return out


def _coverage(capture: Capture, summary: pd.DataFrame, manifest: Manifest, case_name: str) -> Coverage:
    launches = capture.launches()
    unresolved = tuple(str(k) for k, r in zip(launches["kernel"], launches["nvtx_range"], strict=True)
                       if own_range(str(r or "")) is None)
    return coverage(summary, manifest, case_name, unresolved)


def gap_reason(gap: tuple[str, ...]) -> str:
    """Why a stage whose predecessors ``gap`` are missing from the capture is not compared."""
    return (f"{', '.join(gap)}, the stage{'s' if len(gap) > 1 else ''} before it in the case, "
            f"{'are' if len(gap) > 1 else 'is'} not in this capture")


def break_steps(a: Analysis, breaks: dict[str, str]) -> None:
    """Take no step into each stage of ``breaks`` (stage -> why): its verdict says why, its
    expected effects are "not measured", its row of the deltas goes; recorded in ``a.breaks``."""
    a.breaks.update(breaks)
    for stage, why in breaks.items():
        if stage in a.verdicts:
            a.verdicts[stage] = (f"Not compared with the stage before: {why}, so a ratio between them would not "
                                 "be this stage's effect.")
    hit = a.expectations["stage"].isin(breaks)
    if hit.any():
        a.expectations = a.expectations.copy()
        a.expectations.loc[hit, "verdict"] = "not measured"
        a.expectations.loc[hit, "why"] = [f"not compared with the stage before: {breaks[s]}"
                                          for s in a.expectations.loc[hit, "stage"]]
    a.deltas = a.deltas[~a.deltas["stage"].isin(breaks)].reset_index(drop=True)
