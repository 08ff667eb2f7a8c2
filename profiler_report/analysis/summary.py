"""The per-stage summary table, stall table and event timings, and the one JSON form of the
summary (:func:`summary_document`: ``summary --format json`` and the report's ``summary.json``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.analysis.launch_groups import STAGE_RULE, longest_launch, stage_groups, stage_values
from profiler_report.analysis.sanitizer import summary_entry
from profiler_report.capture.model import Capture
from profiler_report.capture.units import template_name
from profiler_report.errors import ReportUnreadableError
from profiler_report.metrics import (
    AT_LEAST_IDEAL,
    COLLECTED_BY,
    EXCESS_METRICS,
    HEADLINE,
    STAGE_COLUMNS,
    TIMING_COLUMNS,
    headline_row,
    ratio,
    required_metrics,
    stall_reasons,
)
from profiler_report.util.frames import tuples
from profiler_report.util.jsonable import dumps, records

if TYPE_CHECKING:
    from profiler_report.analysis import Analysis


def summarize(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Per-stage headline table, one row per stage in launch order.

    A stage of several launches (every launch of one call of a Python stage) is one row: its
    values combined by :func:`~profiler_report.analysis.launch_groups.stage_values` (counts,
    bytes and times summed; ratios duration-weighted; launch settings, grid, block and
    ``launch_id`` its longest launch's), ``launches`` their number, ``kernel`` their names
    joined by " + ".

    Columns: stage, role, kernel, launch_id, launches, grid, block, every :data:`HEADLINE` column,
    ``shared_excessive_source`` ("ncu", "computed" or "not collected"), the load/store split
    of the excessive wavefronts (:func:`excessive_by_side`) and ``top_stalls`` (the three
    largest stall reasons, "reason cycles-per-issue" joined by ", "). ``kernel`` is the short
    name, with its template arguments where two stages share a short name
    (``transpose_tile<32, 8>``).

    Raises:
        ReportUnreadableError: a headline value overflows (inf) from the capture's finite values
            (``1e308`` bytes read plus as many written): no figure can be shown for it.
    """
    wide = capture.wide()
    names = _kernel_display(stages)
    rows = []
    for stage, grp in stage_groups(stages):
        ids = [int(i) for i in grp["launch_id"]]
        lead = longest_launch(grp, wide)
        st = grp[grp["launch_id"] == lead].iloc[0]
        values = stage_values(wide, ids)
        stalls = stall_reasons(values)
        top = ", ".join(f"{k} {v:.1f}" for k, v in list(stalls.items())[:3])
        head = headline_row(values)
        _refuse_overflow(capture, stage, head)
        _refuse_below_ideal(capture, stage, values)
        kernel = names[stage] if len(ids) == 1 else " + ".join(dict.fromkeys(str(k) for k in grp["kernel"]))
        rows.append({"stage": stage, "role": st["role"], "kernel": kernel, "launch_id": lead, "launches": len(ids),
                     "grid": st["grid"], "block": st["block"], **head,
                     **_summed_sides(capture.source, ids), "top_stalls": top})
    return pd.DataFrame(rows)


def _summed_sides(source: pd.DataFrame, launch_ids: list[int]) -> dict[str, float]:
    """:func:`excessive_by_side` summed over a stage's launches (NaN when one is not collected)."""
    parts = [excessive_by_side(source, i) for i in launch_ids]
    return {k: sum(p[k] for p in parts) for k in parts[0]}


def _kernel_display(stages: pd.DataFrame) -> dict[str, str]:
    """stage -> the kernel name a table shows: the short name, or the name with its template
    arguments when another stage has the same short name but another display name."""
    out = {}
    for st in tuples(stages):
        demangled = str(getattr(st, "demangled", "") or "")
        twins = stages[(stages["kernel"] == st.kernel)]
        shared = "demangled" in stages and twins["demangled"].nunique() > 1
        out[st.stage] = template_name(demangled) if shared and demangled else st.kernel
    return out


def _refuse_below_ideal(capture: Capture, stage: str, values: dict[str, float]) -> None:
    """An access count below its ideal (:data:`~profiler_report.metrics.AT_LEAST_IDEAL`) or a
    negative excess is no measurement: every excess computed from it would be negative."""
    for actual, ideal in AT_LEAST_IDEAL:
        if actual in values and ideal in values and values[actual] < values[ideal]:
            raise ReportUnreadableError(
                f"{capture.path}: stage {stage}: {actual} = {values[actual]:.0f} is below {ideal} = "
                f"{values[ideal]:.0f}; ncu never counts fewer than the ideal, so the capture is corrupt",
                "profile the kernel again (ncu --set full) or restore the original capture")
    for name in EXCESS_METRICS:
        if values.get(name, 0.0) < 0:
            raise ReportUnreadableError(f"{capture.path}: stage {stage}: {name} = {values[name]:.0f} is negative; "
                                        "ncu never counts a negative excess, so the capture is corrupt",
                                        "profile the kernel again (ncu --set full) or restore the original capture")


def _refuse_overflow(capture: Capture, stage: str, head: dict[str, float | str]) -> None:
    for col in HEADLINE:
        v = head.get(col.name)
        if isinstance(v, float) and math.isinf(v):
            raise ReportUnreadableError(
                f"{capture.path}: stage {stage}: {col.name} = {col.formula.text() if col.formula else col.name} "
                "overflows (the sum or ratio of the capture's values exceeds any float)",
                f"check the capture's values of {', '.join(dict.fromkeys(col.needs()))}")


def excessive_by_side(source: pd.DataFrame, launch_id: int) -> dict[str, float]:
    """Excessive shared wavefronts of one launch split into the load and the store side.

    Sums the per-instruction values of ``derived__memory_l1_wavefronts_shared_excessive`` (where
    an instruction lacks it: ``memory_l1_wavefronts_shared - memory_l1_wavefronts_shared_ideal``
    at that instruction, the pair the launch-level fallback uses) over the instructions whose
    SASS is a shared load (LDS*) or store (STS*, LDGSTS). NaN (not collected, never 0) when the
    capture has no per-instruction values (CSV exports, or the metrics were not collected), or
    when an instruction carrying excessive wavefronts has no readable SASS, so its side is unknown.
    """
    out = {"shared_excessive_wavefronts_ld": math.nan, "shared_excessive_wavefronts_st": math.nan}
    if source is None or source.empty:
        return out
    sub = source[source["launch_id"] == launch_id]
    excessive = sub["shared_excessive_wavefronts"].astype(float).fillna(
        sub["shared_wavefronts"].astype(float) - sub["shared_ideal_wavefronts"].astype(float))
    known = excessive.notna()
    if not known.any():
        return out
    unread = known & (excessive > 0) & (sub["sass"].fillna("").astype(str).str.strip() == "")
    if unread.any():
        return out
    for side, key in (("load", "shared_excessive_wavefronts_ld"), ("store", "shared_excessive_wavefronts_st")):
        out[key] = float(excessive[known & (sub["side"] == side)].sum())
    return out


def stall_table(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Long table: stage, reason, cycles_per_issue (``smsp__average_warps_issue_stalled_*``)."""
    wide = capture.wide()
    rows = []
    for stage, grp in stage_groups(stages):
        values = stage_values(wide, [int(i) for i in grp["launch_id"]])
        for reason, val in stall_reasons(values).items():
            rows.append({"stage": stage, "reason": reason, "cycles_per_issue": val})
    return pd.DataFrame(rows, columns=["stage", "reason", "cycles_per_issue"])


def missing_metrics(capture: Capture) -> list[tuple[str, str]]:
    """(metric, how to collect it) for each metric the analysis reads that the capture lacks."""
    held = set(capture.metrics["metric"])
    return [(m, COLLECTED_BY[m]) for m in required_metrics() if m not in held]


def add_timings(summary: pd.DataFrame, timings: list[dict[str, Any]]) -> pd.DataFrame:
    """Join event timings (``timings.json`` entries, by stage id) onto the summary.

    ``pct_of_copy_kernel`` compares with the timing named like the ceiling row (role "ceiling",
    else "copy"); ``pct_of_memcpy`` with the entry named "memcpy"; NaN when that entry's GB/s is 0.
    """
    by_name = {t["name"]: t for t in timings}
    ceiling = summary.loc[summary["role"] == "ceiling", "stage"]
    copy = by_name.get(ceiling.iloc[0] if len(ceiling) else "copy")
    memcpy = by_name.get("memcpy")
    out = summary.copy()
    for col in TIMING_COLUMNS:
        out[col.name] = math.nan
    for i, stage in out["stage"].items():
        t = by_name.get(stage)
        if not t:
            continue
        out.loc[i, "event_median_us"] = t["median_us"]
        out.loc[i, "event_p10_us"] = t["p10_us"]
        out.loc[i, "event_p90_us"] = t["p90_us"]
        out.loc[i, "event_gbps"] = t["gbps"]
        out.loc[i, "event_tflops"] = t.get("tflops") or math.nan  # 0 or absent: no flops counted
        out.loc[i, "pct_of_copy_kernel"] = 100 * ratio(t["gbps"], copy["gbps"]) if copy else math.nan
        out.loc[i, "pct_of_memcpy"] = 100 * ratio(t["gbps"], memcpy["gbps"]) if memcpy else math.nan
    return out


#: Summary columns outside the metric registry: name -> (unit, source). The identifying columns
#: (stage, role, kernel, launch_id, grid, block, top_stalls) have no unit.
EXTRA_COLUMNS: dict[str, tuple[str, str]] = {
    "shared_excessive_source": ("", "where shared_excessive_wavefronts comes from: \"ncu\" "
                                "(derived__memory_l1_wavefronts_shared_excessive), \"computed\" (wavefronts - ideal) "
                                "or \"not collected\""),
    "shared_excessive_wavefronts_ld": ("wavefront", "derived__memory_l1_wavefronts_shared_excessive summed over the "
                                       "launch's shared loads (LDS*), per instruction"),
    "shared_excessive_wavefronts_st": ("wavefront", "derived__memory_l1_wavefronts_shared_excessive summed over the "
                                       "launch's shared stores (STS*, LDGSTS), per instruction"),
    "top_stalls": ("cycles per issue", "the three largest smsp__average_warps_issue_stalled_<reason>_per_issue_active"
                   ".ratio, \"reason value\" joined by \", \""),
}

#: The JSON schema of :func:`summary_document`, named in the document itself.
SUMMARY_SCHEMA = "profiler-report.summary/2"
#: The JSON Schema file of the summary document, shipped in the package (schemas/).
SUMMARY_SCHEMA_FILE = "summary.schema.json"


def summary_schema_path() -> Path:
    """The JSON Schema of :func:`summary_document` (``schemas/summary.schema.json`` in the package)."""
    return Path(__file__).resolve().parent.parent / "schemas" / SUMMARY_SCHEMA_FILE


def summary_columns() -> dict[str, dict[str, str]]:
    """Column name -> {"unit", "source"} for every measured column of the summary: the metric
    registry's headline and timing columns, then :data:`EXTRA_COLUMNS`."""
    out = {c.name: {"unit": c.unit, "source": c.source} for c in (*HEADLINE, *TIMING_COLUMNS)}
    out["launches"] = {"unit": "launch", "source": f"{STAGE_COLUMNS[0].source}; {STAGE_RULE}"}
    out.update({name: {"unit": unit, "source": src} for name, (unit, src) in EXTRA_COLUMNS.items()})
    return out


def summary_document(analysis: Analysis, sanitizer: dict[str, Any] | None = None) -> dict[str, Any]:
    """The summary of one capture as JSON-ready data, the one schema of every "summary" JSON.

    Keys: ``schema`` (:data:`SUMMARY_SCHEMA`); ``columns`` (:func:`summary_columns`: each
    column's unit and ncu source); ``stages`` (one record per stage in launch order: the columns
    of :func:`summarize`, plus the event-timing columns with a timings.json; units as in
    ``columns``, NaN as null); ``expectations`` (each expected effect of the case's stages.toml
    and its verdict); ``deltas`` (each headline metric's change from the previous stage);
    ``sanitizer`` (the run's compute-sanitizer results, ``sanitizer.json``:
    :func:`~profiler_report.analysis.sanitizer.summary_entry`; ``{"result": "not run"}`` without);
    ``assessment`` (per stage: bottleneck class, top stall reasons, verdict, next step:
    :func:`~profiler_report.analysis.assessment.stage_records`). The JSON Schema of the document
    is ``profiler_report/schemas/summary.schema.json``.
    """
    from profiler_report.analysis.assessment import stage_records

    return {"schema": SUMMARY_SCHEMA, "columns": summary_columns(), "stages": records(analysis.summary),
            "expectations": records(analysis.expectations), "deltas": records(analysis.deltas),
            "sanitizer": summary_entry(sanitizer), "assessment": stage_records(analysis)}


def summary_json(analysis: Analysis, sanitizer: dict[str, Any] | None = None) -> str:
    """:func:`summary_document` as indented JSON text: ``summary.json`` and ``summary --format json``."""
    return dumps(summary_document(analysis, sanitizer)) + "\n"
