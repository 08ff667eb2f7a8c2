"""Counter-less runs."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis
from profiler_report.analysis.summary import add_timings
from profiler_report.analysis.verdicts import deltas, judge_expectations, speed_column, stage_verdict
from profiler_report.capture.model import RULE_COLUMNS
from profiler_report.cases.manifest import Manifest, load_manifest
from profiler_report.errors import CounterPermissionError, InputError
from profiler_report.metrics import HEADLINE, HEADLINE_BY_NAME, TIMING_COLUMNS
from profiler_report.report.annotate import annotate_stages
from profiler_report.report.html import write_outputs
from profiler_report.report.notes import page_notes
from profiler_report.report.page import SUMMARY_COLUMNS, Page, build_page

_REASON = re.compile(r"unavailable \((.+)\)")


def unavailable_reason(prov: dict[str, Any]) -> str:
    """'permission' or '--no-counters', from provenance's ``counters`` entry (driver.provenance)."""
    m = _REASON.match(str(prov.get("counters", "")))
    return m.group(1) if m else "--no-counters"


def _dims(shape: tuple[int, ...]) -> str:
    dims = [*shape, 1, 1][:3]
    return f"({', '.join(str(d) for d in dims)})"


def _launch(manifest: Manifest, stage_id: str, prov: dict[str, Any]) -> tuple[str, str, str]:
    """(kernel, grid, block) of a stage as the run launched it; '?' where provenance lacks the size."""
    from profiler_report.live.kernels import launch_shape

    try:
        stage = manifest.stage(stage_id)
    except InputError:
        return stage_id, "?", "?"
    try:
        grid, block = launch_shape(stage, int(prov["rows"]), int(prov["cols"]), str(prov["dtype"]), manifest.tile)
    except (KeyError, TypeError, ValueError):
        return stage.kernel, "?", "?"
    return stage.kernel, _dims(grid), _dims(block)


def timings_summary(manifest: Manifest, validation: list[dict[str, Any]], timings: list[dict[str, Any]],
                    prov: dict[str, Any]) -> pd.DataFrame:
    """The per-stage summary (analyze.summarize's columns) of a run without counters.

    One row per validated stage in run order (the ceiling with role "ceiling"); every HEADLINE
    column NaN; the event-timing columns from ``timings`` (absent for stages that failed
    validation: they were not timed).
    """
    ids = [v["stage"] for v in validation] or [t["name"] for t in timings if t["name"] != "memcpy"]
    rows = []
    for i, sid in enumerate(ids):
        kernel, grid, block = _launch(manifest, sid, prov)
        rows.append({"stage": sid, "role": "ceiling" if sid == manifest.ceiling.id else "stage", "kernel": kernel,
                     "launch_id": i, "grid": grid, "block": block, **{c.name: math.nan for c in HEADLINE},
                     "shared_excessive_source": "unavailable", "top_stalls": ""})
    return add_timings(pd.DataFrame(rows), timings)


def timings_analysis(summary: pd.DataFrame, manifest: Manifest, label: str) -> Analysis:
    """analyze.Analysis of a counter-less summary: verdicts and expectations from event timings;
    expectations on counters read ``label``."""
    only = summary[summary["role"] == "stage"].reset_index(drop=True)
    col = speed_column(only)
    verdicts = {only.iloc[i]["stage"]: stage_verdict(only.iloc[i - 1] if i else None, only.iloc[i], col)
                for i in range(len(only))}
    exp = judge_expectations(summary, list(manifest.stages))
    counter = exp["metric"].isin(HEADLINE_BY_NAME.keys())
    exp.loc[counter, "verdict"] = label
    exp.loc[counter, "why"] = "counters were not collected in this run"
    return Analysis(
        summary=summary, stalls=pd.DataFrame(columns=["stage", "reason", "cycles_per_issue"]),
        deltas=deltas(summary), expectations=exp,
        rule_changes=pd.DataFrame(columns=["stage", "previous", "change", "rule", "title", "speedup_pct"]),
        rules=pd.DataFrame(columns=[*RULE_COLUMNS, "stage"]), verdicts=verdicts, missing=[],
        stages=summary[["launch_id", "stage", "role", "kernel", "grid", "block"]],
    )


def mark_unavailable(page: Page, analysis: Analysis, label: str) -> None:
    """Every counter cell of the page reads ``label`` instead of 'not measured'."""
    cols = [c for c in SUMMARY_COLUMNS if c in analysis.summary]
    for row in page.summary_rows:
        for i, c in enumerate(cols):
            if c in HEADLINE_BY_NAME:
                row["cells"][i] = label
    for section in page.stages:
        for m in section.metrics:
            if m.name in HEADLINE_BY_NAME:
                m.value, m.change, m.moved = label, "", False
                m.previous = label if m.previous else ""
        section.raw_conflicts = {"loads": label, "stores": label}
        section.stall_svg = ""


def counters_note(reason: str) -> str:
    """What the missing counters mean and how to get them."""
    how = CounterPermissionError.default_hint.split("; or use")[0] if reason == "permission" \
        else "run again without --no-counters on a machine where ncu may read the counters"
    return (f"Counters unavailable ({reason}): Nsight Compute did not profile this run, so every counter column "
            f"reads 'unavailable ({reason})'. Every stage was validated; correct stages were event-timed "
            f"({', '.join(c.label for c in TIMING_COLUMNS[:2])}). To collect counters: {how}.")


def render_timings_only(folder: Path, manifest: Manifest | None = None, out: Path | None = None,
                        live: bool = True) -> tuple[Analysis, list[Path]]:
    """Render ``folder``'s validation.json + timings.json + provenance.json into a report.

    Writes index.html, summary.csv and summary.json into ``out`` (default: ``folder``), each to a
    temporary name first. Returns the analysis and the written paths.

    Raises:
        InputError: the folder holds neither validation.json nor timings.json, or one is corrupt.
    """
    from profiler_report.capture.sidecars import read_sidecars

    side = read_sidecars(folder)
    if not side.validation and not side.timings:
        raise InputError(f"{folder} holds neither validation.json nor timings.json",
                         "run `profiler-report run --no-counters` to make them")
    manifest = manifest or load_manifest()
    prov: dict[str, Any] = dict(side.provenance or {})
    reason = unavailable_reason(prov)
    label = f"unavailable ({reason})"
    summary = timings_summary(manifest, side.validation or [], side.timings or [], prov)
    analysis = timings_analysis(summary, manifest, label)
    prov["mode"] = "live run" if live else "recorded capture"
    prov["capture"] = "none: no profiler ran"
    prov["rendered_utc"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    prov["mode_note"] = (f"No performance counters ({reason}): every stage was validated and event-timed; "
                         "counter columns are marked unavailable.")
    page = build_page(analysis, prov, manifest, side.timings, side.validation)
    mark_unavailable(page, analysis, label)
    page.notes.extend([counters_note(reason), *page_notes(prov)])
    annotate_stages(page, analysis, None, manifest, side.validation)
    for section, (_, row) in zip(page.stages, analysis.summary[analysis.summary["role"] == "stage"].iterrows(),
                                 strict=False):
        section.conflict_context = f"Launch shape: block {row['block']}, grid {row['grid']}; counters {label}."
        section.attribution, section.attribution_note = [], ""
    return analysis, write_outputs(out or folder, page, analysis)
