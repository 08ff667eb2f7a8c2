"""A run without performance counters (``run --no-counters``, or ERR_NVGPUCTRPERM): its analysis.

Every stage was still validated and the correct ones event-timed; this module turns those
sidecar files (validation.json, timings.json, provenance.json) into the same
:class:`~profiler_report.analysis.Analysis` a capture gives, every counter column NaN. The page
builder then shows those cells as 'unavailable (<reason>)' (:mod:`profiler_report.report.cells`).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis
from profiler_report.analysis.summary import add_timings
from profiler_report.analysis.verdicts import deltas, judge_expectations, speed_column, stage_verdict
from profiler_report.capture.model import RULE_COLUMNS
from profiler_report.errors import CounterPermissionError, InputError
from profiler_report.metrics import HEADLINE, TIMING_COLUMNS
from profiler_report.model.base import Case
from profiler_report.model.manifest import Manifest

_REASON = re.compile(r"unavailable \((.+)\)")


def unavailable_reason(prov: dict[str, Any]) -> str:
    """'permission' or '--no-counters', from provenance's ``counters`` entry (driver.provenance);
    'no stage was profiled' when counters were to be collected but the folder holds no capture
    (every stage failed validation), never '--no-counters', which nobody asked for."""
    counters = str(prov.get("counters", ""))
    m = _REASON.match(counters)
    if m:
        return m.group(1)
    return "no stage was profiled" if counters == "collected" else "--no-counters"


def _dims(shape: tuple[int, ...]) -> str:
    dims = [*shape, 1, 1][:3]
    return f"({', '.join(str(d) for d in dims)})"


def _launch(case: Case, stage_id: str, prov: dict[str, Any]) -> tuple[str, str, str]:
    """(kernel, grid, block) of a stage as the run launched it; '?' where provenance lacks the size.
    A grid that grew on the GPU (``Launch.extra_blocks``) reads "(x, 1, 1) + tail split"."""
    try:
        stage = case.manifest.stage(stage_id)
    except InputError:
        return stage_id, "?", "?"
    try:
        launch = case.launch(stage, {d: int(prov[d]) for d in case.dims}, str(prov["dtype"]))
    except (KeyError, TypeError, ValueError, NotImplementedError):  # NotImplementedError: a Python stage's
        return stage.kernel, "?", "?"                                  # kernels choose their own launch
    grid = _dims(launch.grid) + (" + tail split" if launch.extra_blocks else "")
    return stage.kernel, grid, _dims(launch.block)


def timings_summary(case: Case, validation: list[dict[str, Any]], timings: list[dict[str, Any]],
                    prov: dict[str, Any]) -> pd.DataFrame:
    """The per-stage summary (analyze.summarize's columns) of a run without counters.

    One row per validated stage in run order (the ceiling with role "ceiling"); every HEADLINE
    column NaN; the event-timing columns from ``timings`` (absent for stages that failed
    validation: they were not timed).
    """
    ids = [v["stage"] for v in validation] or [t["name"] for t in timings if t["name"] != "memcpy"]
    rows = []
    for i, sid in enumerate(ids):
        kernel, grid, block = _launch(case, sid, prov)
        rows.append({"stage": sid, "role": "ceiling" if sid == case.manifest.ceiling.id else "stage", "kernel": kernel,
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
    counter = ~exp["metric"].isin([c.name for c in TIMING_COLUMNS])  # headline columns and raw ncu metrics
    exp.loc[counter, "verdict"] = label
    exp.loc[counter, "why"] = "counters were not collected in this run"
    return Analysis(
        summary=summary, stalls=pd.DataFrame(columns=["stage", "reason", "cycles_per_issue"]),
        deltas=deltas(summary), expectations=exp,
        rule_changes=pd.DataFrame(columns=["stage", "previous", "change", "rule", "title", "speedup_pct"]),
        rules=pd.DataFrame(columns=[*RULE_COLUMNS, "stage"]), verdicts=verdicts, missing=[],
        stages=summary[["launch_id", "stage", "role", "kernel", "grid", "block"]],
    )


def counters_note(reason: str) -> str:
    """What the missing counters mean and how to get them."""
    how = CounterPermissionError.default_hint.split("; or use")[0] if reason == "permission" \
        else "run again without --no-counters on a machine where ncu may read the counters"
    return (f"Counters unavailable ({reason}): Nsight Compute did not profile this run, so every counter column "
            f"reads 'unavailable ({reason})'. Every stage was validated; correct stages were event-timed "
            f"({', '.join(c.label for c in TIMING_COLUMNS[:2])}). To collect counters: {how}.")


