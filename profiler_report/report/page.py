"""The page model."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer, DiffLexer

from profiler_report.analysis import Analysis
from profiler_report.cases.manifest import Manifest, stage_sources
from profiler_report.metrics import HEADLINE, TIMING_COLUMNS
from profiler_report.report.charts import draw_charts
from profiler_report.report.tables import bench_rows, shape_table, shape_verdicts, sweep_table
from profiler_report.util.fmt import fmt

#: Rows of each stage's "metrics that moved" table, in order.
STAGE_METRICS = (
    "event_gbps", "pct_of_memcpy", "duration_us", "dram_throughput_gbps", "shared_wavefronts_per_load",
    "shared_wavefronts_per_store", "shared_excessive_wavefronts", "global_load_efficiency_pct",
    "global_store_efficiency_pct", "global_load_sectors_per_request", "global_store_sectors_per_request",
    "l2_excessive_sectors", "achieved_occupancy_pct", "registers_per_thread", "shared_mem_per_block_bytes",
)


#: Columns of the summary table at the top of the report.
SUMMARY_COLUMNS = (
    "event_gbps", "pct_of_memcpy", "duration_us", "shared_excessive_wavefronts", "shared_wavefronts_per_load",
    "shared_wavefronts_per_store", "global_load_efficiency_pct", "global_store_efficiency_pct",
    "global_store_sectors_per_request", "achieved_occupancy_pct",
)


#: Per-instruction shared-memory ratios: "n/a" (not "not measured") for a kernel without such accesses.
_NO_SHARED = {"shared_wavefronts_per_load": "shared_load_instructions",
              "shared_wavefronts_per_store": "shared_store_instructions"}


_COLUMNS = {c.name: c for c in (*HEADLINE, *TIMING_COLUMNS)}


@dataclass
class MetricRow:
    name: str
    label: str
    previous: str
    value: str
    change: str
    source: str
    moved: bool


@dataclass
class StageSection:
    id: str
    title: str
    kernel: str
    change: str
    verdict: str
    correct: str
    launch: str
    code_html: str
    code_note: str
    metrics: list[MetricRow]
    expectations: list[dict[str, Any]]
    raw_conflicts: dict[str, str]
    top_stalls: str
    rules_appear: list[dict[str, Any]]
    rules_vanish: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    bandwidth_svg: str
    stall_svg: str
    # Filled by annotate.annotate_stages: block/tile shape and conflict side beside the figure,
    # warnings (metric traps), per-instruction attribution rows and how they were attributed.
    conflict_context: str = ""
    notes: list[str] = field(default_factory=list)
    attribution: list[dict[str, Any]] = field(default_factory=list)
    attribution_note: str = ""


@dataclass
class Page:
    title: str
    mode: str                 # "live run" or "recorded capture"
    mode_note: str
    environment: list[tuple[str, str]]
    summary_header: list[str]
    summary_rows: list[dict[str, Any]]
    overview_svg: str
    stages: list[StageSection]
    ceilings: list[dict[str, str]]
    missing: list[tuple[str, str]]
    validation: list[dict[str, Any]]
    sources: list[tuple[str, str]]
    notes: list[str] = field(default_factory=list)
    peers_svg: str = ""
    peers_rows: list[dict[str, str]] = field(default_factory=list)
    sweep_svg: str = ""
    sweep_rows: list[dict[str, str]] = field(default_factory=list)
    shapes_svg: str = ""
    shapes_rows: list[dict[str, Any]] = field(default_factory=list)  # shape_table records
    shapes_verdicts: list[str] = field(default_factory=list)  # shape_verdicts: fastest vs chosen
    comparison: list[dict[str, Any]] = field(default_factory=list)  # check.comparison_rows: render --baseline
    comparison_note: str = ""


_FORMATTER = HtmlFormatter(noclasses=True, nowrap=False, style="friendly")


def code_diff_html(previous: str | None, current: str, prev_id: str, cur_id: str) -> str:
    """The stage's source as a highlighted unified diff from the previous stage (or in full)."""
    if previous is None:
        return highlight(current, CudaLexer(), _FORMATTER)
    # Function names differ by design; compare bodies so the diff shows the one real change.
    norm_prev = previous.replace(f"transpose_{prev_id}", "transpose_STAGE")
    norm_cur = current.replace(f"transpose_{cur_id}", "transpose_STAGE")
    diff = "\n".join(difflib.unified_diff(norm_prev.splitlines(), norm_cur.splitlines(),
                                          fromfile=prev_id, tofile=cur_id, lineterm="", n=3))
    return highlight(diff or "(no source change)", DiffLexer(), _FORMATTER)


def _cell(row: pd.Series, col: str) -> str:
    if col in _NO_SHARED and row.get(_NO_SHARED[col]) == 0:
        return "n/a"  # the kernel issues no shared-memory instruction of this kind
    return fmt(row[col], _COLUMNS[col].unit)


def _metric_rows(prev: pd.Series | None, row: pd.Series) -> list[MetricRow]:
    out = []
    for name in STAGE_METRICS:
        if name not in row.index:
            continue
        col = _COLUMNS[name]
        cur = row[name]
        old = prev[name] if prev is not None and name in prev.index else math.nan
        change, moved = "", False
        if prev is not None and not (pd.isna(cur) or pd.isna(old)):
            if old != 0:
                rel = (cur - old) / abs(old)
                change = f"{rel:+.0%}"
                moved = abs(rel) >= 0.05
            elif cur != 0:
                change, moved = "from 0", True
            else:
                change = "="
        source = col.source
        if name == "shared_excessive_wavefronts" and row.get("shared_excessive_source") == "computed":
            source += " [computed: the derived metric was not in the capture]"
        out.append(MetricRow(name, col.label, _cell(prev, name) if prev is not None else "",
                             _cell(row, name), change, source, moved))
    return out


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in frame.to_dict("records")]


def build_page(analysis: Analysis, provenance: dict[str, Any], manifest: Manifest | None = None,
               timings: list[dict[str, Any]] | None = None, validation: list[dict[str, Any]] | None = None,
               charts: bool = True, bench: list[dict[str, Any]] | None = None,
               sweep: list[dict[str, Any]] | None = None) -> Page:
    """All the data the template shows, computed from the analysis and the provenance; with
    ``charts``, the charts too, drawn here (:func:`draw_charts`), else left empty."""
    summary = analysis.summary
    stages = summary[summary["role"] == "stage"].reset_index(drop=True)
    sources = stage_sources(manifest.source_text()) if manifest else {}
    titles = {s.id: s for s in manifest.stages} if manifest else {}
    valid = {v["stage"]: v for v in validation or []}
    sections = []
    for i, row in stages.iterrows():
        prev = stages.iloc[i - 1] if i else None
        sid = row["stage"]
        st = titles.get(sid)
        cur_src = sources.get(sid)
        prev_src = sources.get(prev["stage"]) if prev is not None else None
        if cur_src is not None:
            code = code_diff_html(prev_src if prev is not None else None, cur_src,
                                  prev["stage"] if prev is not None else "", sid)
            note = f"diff from {prev['stage']}" if prev is not None else "full source"
        else:
            code, note = "", "source not available: this capture was not made from the project's kernels"
        exp = analysis.expectations[analysis.expectations["stage"] == sid]
        rc = analysis.rule_changes[analysis.rule_changes["stage"] == sid]
        findings = analysis.rules[(analysis.rules.get("stage") == sid) &
                                  analysis.rules["type"].isin(["warning", "optimization", "error"])] \
            if not analysis.rules.empty else analysis.rules
        v = valid.get(sid)
        sections.append(StageSection(
            id=sid, title=st.title if st else sid, kernel=row["kernel"], change=st.change if st else "",
            verdict=analysis.verdicts.get(sid, ""),
            correct=("correct (bit-exact against cupy.transpose)" if v["correct"] else "WRONG: " + v["message"])
            if v else "not validated here (recorded capture)",
            launch=f"grid {row['grid']}, block {row['block']}",
            code_html=code, code_note=note,
            metrics=_metric_rows(prev, row),
            expectations=_records(exp),
            raw_conflicts={"loads": fmt(row["bank_conflicts_ld_raw"]), "stores": fmt(row["bank_conflicts_st_raw"])},
            top_stalls=row["top_stalls"],
            rules_appear=_records(rc[rc["change"] == "appears"]),
            rules_vanish=_records(rc[rc["change"] == "vanishes"]),
            findings=_records(findings[["title", "message", "speedup_pct"]]) if len(findings) else [],
            bandwidth_svg="", stall_svg="",  # filled by fill_charts
        ))
    header = ["stage", *[_COLUMNS[c].label for c in SUMMARY_COLUMNS if c in summary], "verdict"]
    rows = []
    for _, r in summary.iterrows():
        cells = [_cell(r, c) for c in SUMMARY_COLUMNS if c in summary]
        default = "ceiling reference" if r["role"] == "ceiling" else ""
        # The table keeps the speed clause; the stage's section gives the whole verdict.
        rows.append({"stage": r["stage"], "role": r["role"], "cells": cells,
                     "verdict": analysis.verdicts.get(r["stage"], default).split(";")[0].rstrip(".") })
    ceilings = [{"name": t["name"], "gbps": fmt(t["gbps"]), "median_us": fmt(t["median_us"])}
                for t in timings or [] if t["name"] in ("memcpy", manifest.ceiling.id if manifest else "copy")]
    mode = provenance.get("mode", "recorded capture")
    sweep_frame = sweep_table(sweep) if sweep else pd.DataFrame()
    page = Page(
        title=f"Staged optimization report: {provenance.get('gpu', 'unknown GPU')}",
        mode=mode,
        mode_note=provenance.get("mode_note", ""),
        environment=environment_rows(provenance),
        summary_header=header, summary_rows=rows,
        overview_svg="",  # filled by fill_charts, as are peers_svg and sweep_svg
        stages=sections, ceilings=ceilings,
        missing=analysis.missing,
        validation=list(validation or []),
        sources=[(c.label, c.source) for c in (*HEADLINE, *TIMING_COLUMNS)],
        peers_rows=bench_rows(bench or []),
        sweep_rows=_records(sweep_frame) if not sweep_frame.empty else [],
    )
    shapes = shape_table(sweep) if sweep else pd.DataFrame()
    if not shapes.empty:
        page.shapes_rows = _records(shapes)
        page.shapes_verdicts = shape_verdicts(shapes)
    if charts:
        draw_charts(page, analysis, timings, bench, sweep)
    return page


_ENV_KEYS = (
    ("mode", "mode"), ("gpu", "GPU"), ("sm_count", "SMs"), ("compute_capability", "compute capability"),
    ("driver", "driver"), ("cuda_runtime", "CUDA runtime"), ("cuda_driver_api", "CUDA driver API"),
    ("cupy", "CuPy"), ("ncu_version", "Nsight Compute"), ("section_set", "ncu --set"),
    ("clock_control", "clock control"), ("cache_control", "cache control"),
    ("rows", "rows (timing)"), ("cols", "cols (timing)"), ("profile_rows", "rows (profiled)"),
    ("profile_cols", "cols (profiled)"), ("dtype", "dtype"), ("repeats", "timing repeats"),
    ("date_utc", "date"), ("commit", "git commit"), ("capture", "capture file"), ("rendered_utc", "rendered"),
)


def environment_rows(prov: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of the environment block; absent keys read 'unknown (not recorded)'."""
    return [(label, str(prov.get(key, "unknown (not recorded)"))) for key, label in _ENV_KEYS]
