"""Render stage: one self-contained HTML report, plus the summary as CSV and JSON.

Page data is built first as plain dataclasses (:func:`build_page`); the jinja2 template in
``templates/report.html.j2`` (autoescape, StrictUndefined) only formats it. Charts are matplotlib
(Agg) SVGs inlined in the page; code is highlighted by pygments with inline styles, so the file
works offline and makes no external request.
"""

from __future__ import annotations

import difflib
import io
import json
import math
import multiprocessing
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import pandas as pd
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer, DiffLexer

from .analyze import HEADLINE, TIMING_COLUMNS, Analysis
from .config import Manifest, resource_dir, stage_sources
from .fsio import atomic_write_many


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # keep text as text: smaller files, searchable
    plt.rcParams["svg.hashsalt"] = "profiler-report"  # stable ids, so reports diff cleanly
    return plt

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


def fmt(x: Any, unit: str = "") -> str:
    """Human formatting: NaN -> 'not measured'; big counts with separators; small with 3 digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "not measured"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if unit == "%":
        return f"{x:.1f}%"
    if abs(x) >= 1000 or (x == int(x) and abs(x) >= 10):
        return f"{x:,.0f}"
    if x == int(x):
        return f"{int(x)}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"


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


# ---------------------------------------------------------------------------------------------
# Chart data (tested directly) and drawing


def bandwidth_chart_data(summary: pd.DataFrame, timings: list[dict[str, Any]] | None) -> pd.DataFrame:
    """Bars for the bandwidth chart: label, gbps, kind ("stage"|"ceiling"), source.

    Event-timed GB/s when timings exist (memcpy and the copy kernel as ceilings), otherwise the
    profiled DRAM throughput ``(dram__bytes_read.sum + dram__bytes_write.sum) / duration``.
    """
    rows = []
    use_events = "event_gbps" in summary and summary["event_gbps"].notna().any()
    for r in summary.itertuples():
        val = r.event_gbps if use_events else r.dram_throughput_gbps
        rows.append({"label": r.stage, "gbps": float(val), "kind": r.role,
                     "source": "CUDA events" if use_events else "ncu DRAM throughput"})
    if use_events:
        for t in timings or []:
            if t["name"] == "memcpy":
                rows.append({"label": "memcpy", "gbps": float(t["gbps"]), "kind": "ceiling", "source": "CUDA events"})
    return pd.DataFrame(rows, columns=["label", "gbps", "kind", "source"])


def stall_chart_data(stalls: pd.DataFrame, stage: str, top: int = 8) -> pd.DataFrame:
    """The ``top`` largest stall reasons of one stage: reason, cycles_per_issue."""
    sub = stalls[stalls["stage"] == stage].sort_values("cycles_per_issue", ascending=False).head(top)
    return sub[["reason", "cycles_per_issue"]].reset_index(drop=True)


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})  # fixed margins: one draw pass, no tight bbox
    pyplot().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _bar_figure(height_in: float) -> tuple[Any, Any]:
    """A horizontal-bar figure with fixed margins (room for 30-character labels and an x label):
    a layout engine or a tight bounding box would draw every chart twice."""
    fig, ax = pyplot().subplots(figsize=(7.0, height_in))
    fig.subplots_adjust(left=0.36, right=0.93, top=1 - 0.12 / height_in, bottom=0.6 / height_in)
    return fig, ax


#: Bar colours of the bandwidth charts.
HIGHLIGHT, STAGE, CEILING, PEER = "#2b6cb0", "#a3bffa", "#bbbbbb", "#f6ad55"


def bar_colors(data: pd.DataFrame, highlight_label: str | None = None) -> list[str]:
    """Colour of each bar of :func:`draw_bandwidth`: ceilings grey, peers orange, the highlighted
    stage dark and the other stages light; every stage dark when nothing is highlighted."""
    colors = []
    for r in data.itertuples():
        if r.kind == "ceiling":
            colors.append(CEILING)
        elif r.kind == "stage-other":
            colors.append(PEER)
        elif highlight_label is None or r.label == highlight_label:
            colors.append(HIGHLIGHT)
        else:
            colors.append(STAGE)
    return colors


def draw_bandwidth(data: pd.DataFrame, highlight_label: str | None = None) -> str:
    """Horizontal bars of GB/s; ceilings hatched, the highlighted stage dark. Returns SVG text."""
    return highlight_bar(_draw_bandwidth(data), data, highlight_label)


def bandwidth_charts(data: pd.DataFrame, labels: list[str | None]) -> dict[str | None, str]:
    """``{label: draw_bandwidth(data, label)}``, drawn once and recoloured per label (a drawing
    costs ~0.1 s, a recolouring microseconds); label None is the chart with every stage dark."""
    base = _draw_bandwidth(data)
    return {label: highlight_bar(base, data, label) for label in labels}


def _draw_bandwidth(data: pd.DataFrame) -> str:
    """The chart with nothing highlighted; bar ``i`` (data order) is the SVG group ``bar-i``."""
    if data.empty or data["gbps"].isna().all():
        return ""
    fig, ax = _bar_figure(0.32 * len(data) + 0.9)
    y = list(range(len(data)))[::-1]
    bars = ax.barh(y, data["gbps"].fillna(0), color=bar_colors(data), hatch=None)
    for i, bar in enumerate(bars):
        bar.set_gid(f"bar-{i}")
    ax.set_yticks(y, data["label"])
    for yi, v in zip(y, data["gbps"], strict=True):
        if not math.isnan(v):
            ax.text(v, yi, f" {v:,.0f}", va="center", fontsize=8)
    source = data["source"].iloc[0] if data["source"].nunique() == 1 else "timing source per entry in the table"
    ax.set_xlabel(f"GB/s ({source}; bytes read + written)")
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_xlim(0, float(data["gbps"].max()) * 1.15)
    return _svg(fig)


def highlight_bar(svg: str, data: pd.DataFrame, highlight_label: str | None) -> str:
    """The SVG of :func:`_draw_bandwidth` recoloured as ``bar_colors(data, highlight_label)``."""
    for i, (old, new) in enumerate(zip(bar_colors(data), bar_colors(data, highlight_label), strict=True)):
        if old != new:
            svg = _set_fill(svg, f"bar-{i}", new)
    return svg


def _set_fill(svg: str, gid: str, color: str) -> str:
    """Set the fill of the one path in matplotlib's group ``<g id="gid">`` (a patch with a gid)."""
    pattern = re.compile(rf'(<g id="{re.escape(gid)}">\s*<path [^>]*?style="fill: )#[0-9a-fA-F]{{6}}')
    return pattern.sub(lambda m: m.group(1) + color, svg, count=1)


_SVG_ID = re.compile(r'(\bid="|url\(#|href="#)([^"\)]+)')


def scope_ids(svg: str, prefix: str) -> str:
    """Prefix every id of one SVG, and every reference to one, with ``prefix``: each chart's
    ids (figure_1, clip paths, tick markers) would otherwise repeat across the charts of a page."""
    return _SVG_ID.sub(lambda m: m.group(1) + prefix + m.group(2), svg)


def draw_stalls(data: pd.DataFrame, stage: str) -> str:
    """Bars of stall cycles per issued instruction for one stage. Returns SVG text."""
    if data.empty:
        return ""
    fig, ax = _bar_figure(0.28 * len(data) + 0.9)
    y = list(range(len(data)))[::-1]
    ax.barh(y, data["cycles_per_issue"], color="#c05621")
    ax.set_yticks(y, data["reason"])
    ax.set_xlabel(f"{stage}: warp stall cycles per issued instruction", fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


# ---------------------------------------------------------------------------------------------
# Code


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


# ---------------------------------------------------------------------------------------------
# Page


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


#: A chart job: the function that draws it and its arguments (both must pickle, for ChartPool);
#: sidecar_chart_jobs and capture_chart_jobs make them, a ChartPool runs them, fill_charts places them.
ChartJob = tuple[Callable[..., Any], tuple[Any, ...]]


def sidecar_chart_jobs(bench: list[dict[str, Any]] | None = None,
                       sweep: list[dict[str, Any]] | None = None) -> dict[str, ChartJob]:
    """The charts drawn from a live run's bench.json and sweep.json alone, as jobs for
    :func:`fill_charts`: they need no capture, so they can be drawn while it is read."""
    peers = peers_chart_data(bench) if bench else pd.DataFrame()
    sweep_frame = sweep_table(sweep) if sweep else pd.DataFrame()
    jobs: dict[str, ChartJob] = {}
    if not sweep_frame.empty:
        jobs["sweep"] = (draw_sweep, (sweep_frame,))  # log axis and legend: ~0.4 s, the slowest chart
    if not peers.empty:
        jobs["peers"] = (draw_bandwidth, (peers,))
    shapes = shape_table(sweep) if sweep else pd.DataFrame()
    if not shapes.empty:
        jobs["shapes"] = (draw_shapes, (shapes,))
    return jobs


def capture_chart_jobs(analysis: Analysis, timings: list[dict[str, Any]] | None = None) -> dict[str, ChartJob]:
    """The charts drawn from the analysis (bandwidth overview and per stage, stalls per stage),
    as jobs for :func:`fill_charts`."""
    summary = analysis.summary
    stage_ids = list(summary.loc[summary["role"] == "stage", "stage"])
    jobs: dict[str, ChartJob] = {
        "bandwidth": (bandwidth_charts, (bandwidth_chart_data(summary, timings), [None, *stage_ids])),
    }
    for sid in stage_ids:
        jobs[f"stalls:{sid}"] = (draw_stalls, (stall_chart_data(analysis.stalls, sid), sid))
    return jobs


def fill_charts(page: Page, drawn: dict[str, Any]) -> None:
    """Put the results of :func:`sidecar_chart_jobs` and :func:`capture_chart_jobs` into ``page``,
    each chart's ids with a prefix of its own so that none repeats on the page."""
    page.overview_svg = scope_ids(drawn["bandwidth"][None], "overview-")
    for i, section in enumerate(page.stages):
        section.bandwidth_svg = scope_ids(drawn["bandwidth"].get(section.id, ""), f"bandwidth-{i}-")
        section.stall_svg = scope_ids(drawn.get(f"stalls:{section.id}", ""), f"stalls-{i}-")
    page.peers_svg = scope_ids(drawn.get("peers", ""), "peers-")
    page.sweep_svg = scope_ids(drawn.get("sweep", ""), "sweep-")
    page.shapes_svg = scope_ids(drawn.get("shapes", ""), "shapes-")


def draw_charts(page: Page, analysis: Analysis, timings: list[dict[str, Any]] | None = None,
                bench: list[dict[str, Any]] | None = None, sweep: list[dict[str, Any]] | None = None) -> None:
    """Draw the charts of a :func:`build_page` page into it, in this process (0.05-0.4 s a chart;
    :class:`ChartPool` draws them side by side)."""
    jobs = {**sidecar_chart_jobs(bench, sweep), **capture_chart_jobs(analysis, timings)}
    fill_charts(page, {key: fn(*args) for key, (fn, args) in jobs.items()})


def _ignore_sigint() -> None:
    """Chart workers leave Ctrl-C to the parent: a worker interrupted while it holds the pool's
    queue lock would hang the parent's shutdown, and each would print a traceback. The parent
    ends them (SIGTERM) when it leaves the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ChartPool:
    """Worker processes, forked on creation, that draw chart jobs side by side.

    With ``workers`` <= 1, or where no pool can be made (no fork, no /dev/shm for its
    semaphores), jobs run in this process when their results are asked for. Fork only from a
    process that holds no CUDA context (not from a live run). Python 3.12+ warns (a
    DeprecationWarning, hidden by default) that forking a threaded process may deadlock: the only
    other threads here are OpenBLAS's (numpy's), which it stops at fork (pthread_atfork). Use it
    as a context manager: leaving it ends the workers.
    """

    def __init__(self, workers: int) -> None:
        self._pool: multiprocessing.pool.Pool | None = None
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            try:
                self._pool = multiprocessing.get_context("fork").Pool(workers, initializer=_ignore_sigint)
            except OSError:
                self._pool = None

    def draw(self, jobs: dict[str, ChartJob]) -> Callable[[], dict[str, Any]]:
        """Start ``jobs``; return a function that waits for them and returns ``{key: result}``.

        The function raises whatever a job raised.
        """
        if self._pool is None:
            return lambda: {key: fn(*args) for key, (fn, args) in jobs.items()}
        started = {key: self._pool.apply_async(fn, args) for key, (fn, args) in jobs.items()}
        return lambda: {key: result.get() for key, result in started.items()}

    def close(self) -> None:
        """End the workers (safe to call twice)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> ChartPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def peers_chart_data(bench: list[dict[str, Any]]) -> pd.DataFrame:
    """Bars for the 'versus peers' chart from bench.json rows at the headline size.

    Columns as :func:`bandwidth_chart_data`; stages dark, peers light, memcpy and copies as ceilings;
    rows that were skipped or wrong are left out.
    """
    rows = []
    for r in bench:
        gbps = r.get("gbps")
        if gbps is None or gbps != gbps or r.get("note", "").startswith("WRONG"):
            continue
        kind = {"peer": "stage-other", "stage": "stage"}.get(r["kind"], "ceiling")
        rows.append({"label": r["name"], "gbps": float(gbps), "kind": kind,
                     "source": "CUDA events" if r.get("timing") == "cuda-events" else r.get("timing", "")})
    frame = pd.DataFrame(rows, columns=["label", "gbps", "kind", "source"])
    return frame.sort_values("gbps", ascending=False).reset_index(drop=True)


def bench_rows(bench: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Rows of the peers table; ``vs_best_peer`` is GB/s over the fastest peer's GB/s at the same
    size and dtype ("" where no peer ran there)."""
    best: dict[tuple[Any, Any, Any], float] = {}
    for r in bench:
        g = r.get("gbps")
        if r["kind"] == "peer" and g is not None and g == g and not r.get("note", "").startswith("WRONG"):
            key = (r["rows"], r["cols"], r["dtype"])
            best[key] = max(best.get(key, 0.0), float(g))
    out = []
    for r in bench:
        g, ref = r.get("gbps"), best.get((r["rows"], r["cols"], r["dtype"]))
        ratio = f"{g / ref:.3f}x" if ref and g is not None and g == g else ""
        out.append({"name": r["name"], "kind": r["kind"], "gbps": fmt(g),
                    "pct_of_memcpy": fmt(r.get("pct_of_memcpy"), "%"), "vs_best_peer": ratio,
                    "median_us": fmt(r.get("median_us")), "spread": f"{fmt(r.get('p10_us'))} - {fmt(r.get('p90_us'))}",
                    "timing": r.get("timing", ""), "note": r.get("note", "")})
    return out


def shape_table(sweep: list[dict[str, Any]]) -> pd.DataFrame:
    """The block-shape sweep (sweep.json rows of kind "shape") as a table: dtype, size, shape
    ([micro-block rows, cols, threads]), tile, threads, per_thread, gbps, pct_of_memcpy, p10_us,
    p90_us, median_us, chosen (the shape the report profiles), fastest (the fastest at its size)."""
    frame = pd.DataFrame([r for r in sweep if r.get("kind") == "shape"])
    if frame.empty or "gbps" not in frame:
        return pd.DataFrame()
    frame = frame[frame["gbps"].notna()].copy()
    if frame.empty:
        return frame
    frame["size"] = frame["rows"].astype(str) + "x" + frame["cols"].astype(str)
    frame["shape"] = frame["name"].str.extract(r"(\[[^\]]*\])", expand=False).fillna(frame["name"])
    for col, default in (("tile", ""), ("threads", 0), ("per_thread", 0), ("chosen", False)):
        if col not in frame:
            frame[col] = default
    fastest = frame.groupby(["dtype", "size"], sort=False)["gbps"].transform("max")
    frame["fastest"] = frame["gbps"] == fastest
    cols = ["dtype", "size", "shape", "tile", "threads", "per_thread", "gbps", "pct_of_memcpy", "median_us",
            "p10_us", "p90_us", "chosen", "fastest"]
    return frame[cols].reset_index(drop=True)


def shape_verdicts(shapes: pd.DataFrame) -> list[str]:
    """One sentence per size and dtype: the fastest shape, and whether the chosen (profiled) shape
    is slower than it beyond the run-to-run spread (chosen's p10 above the fastest's p90)."""
    out = []
    for (dtype, size), grp in shapes.groupby(["dtype", "size"], sort=False):
        best = grp.loc[grp["gbps"].idxmax()]
        chosen = grp[grp["chosen"].astype(bool)]
        text = f"{size} {dtype}: fastest {best['shape']} at {best['pct_of_memcpy']:.1f}% of memcpy"
        if chosen.empty:
            text += "; the chosen shape was not swept"
        else:
            c = chosen.iloc[0]
            if c["shape"] == best["shape"]:
                text += ", the chosen shape"
            elif c["p10_us"] > best["p90_us"]:
                text += (f"; the chosen {c['shape']} ({c['pct_of_memcpy']:.1f}%) is slower beyond the spread: "
                         "change `template` in kernels/stages.toml")
            else:
                text += f"; the chosen {c['shape']} ({c['pct_of_memcpy']:.1f}%) is within the spread of it"
        out.append(text)
    return out


def draw_shapes(shapes: pd.DataFrame) -> str:
    """% of memcpy of every swept tile shape (one row each), one marker series per size and dtype;
    the chosen shape's label in bold. Returns SVG text."""
    order = list(dict.fromkeys(shapes["shape"]))
    fig, ax = _bar_figure(0.22 * len(order) + 1.1)
    y = {shape: len(order) - 1 - i for i, shape in enumerate(order)}
    markers = "os^Dv<>p"
    for i, ((dtype, size), grp) in enumerate(shapes.groupby(["dtype", "size"], sort=False)):
        ax.scatter(grp["pct_of_memcpy"], grp["shape"].map(y), s=14, marker=markers[i % len(markers)],
                   label=f"{size} {dtype}", zorder=3)
    ax.set_yticks(list(y.values()), list(y.keys()), fontsize=8)
    chosen = set(shapes.loc[shapes["chosen"].astype(bool), "shape"])
    for label in ax.get_yticklabels():
        if label.get_text() in chosen:
            label.set_fontweight("bold")
    ax.set_xlabel("% of memcpy (CUDA events)", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def sweep_table(sweep: list[dict[str, Any]]) -> pd.DataFrame:
    """Sweep rows as a table, one row per dtype and size: dtype, size, where (L2|DRAM), best stage,
    its GB/s and % of memcpy, and where peers ran at that size the fastest peer, its % of memcpy and
    ``vs_peer`` (best stage GB/s / fastest peer GB/s); NaN / "" where no peer ran."""
    frame = pd.DataFrame(sweep)
    if frame.empty:
        return frame
    frame["size"] = frame["rows"].astype(str) + "x" + frame["cols"].astype(str)
    frame = frame[frame["name"].map(lambda n: "[" not in n)]  # attempts with other build options aside
    timed = frame[frame["gbps"].notna()]
    if "note" in timed:
        timed = timed[~timed["note"].fillna("").astype(str).str.startswith("WRONG")]
    stages = timed[timed["kind"] == "stage"]
    best = stages.loc[stages.groupby(["dtype", "size"], sort=False)["gbps"].idxmax()]
    out = best[["dtype", "size", "rows", "cols", "resident", "name", "gbps", "pct_of_memcpy"]].copy()
    peers = timed[timed["kind"] == "peer"]
    top = peers.loc[peers.groupby(["dtype", "size"], sort=False)["gbps"].idxmax()] if len(peers) else peers
    top = top[["dtype", "size", "name", "gbps", "pct_of_memcpy"]].rename(
        columns={"name": "best_peer", "gbps": "peer_gbps", "pct_of_memcpy": "peer_pct_of_memcpy"})
    out = out.merge(top, on=["dtype", "size"], how="left")
    out["best_peer"] = out["best_peer"].fillna("")
    out["vs_peer"] = out["gbps"] / out["peer_gbps"]
    itemsize = out["dtype"].map({"float16": 2, "float32": 4, "float64": 8})
    out["bytes_moved"] = 2 * out["rows"] * out["cols"] * itemsize
    out = out.sort_values(["dtype", "bytes_moved"], kind="stable")
    return out.rename(columns={"name": "best_stage"}).reset_index(drop=True)


def draw_sweep(frame: pd.DataFrame) -> str:
    """Best stage's % of memcpy against the bytes moved (log scale), one series per dtype, points
    joined in size order within a dtype; L2-resident points hollow. Returns SVG text."""
    fig, ax = pyplot().subplots(figsize=(7.5, 3.4))
    fig.subplots_adjust(left=0.1, right=0.97, top=0.96, bottom=0.18)
    data = frame.assign(mib=frame["bytes_moved"] / 2**20).sort_values(["dtype", "mib"], kind="stable")
    colors = pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    aligned = (data["rows"] % 32 == 0) & (data["cols"] % 32 == 0)
    for i, (dtype, sub) in enumerate(data.groupby("dtype", sort=False)):
        color = colors[i % len(colors)]
        for where, face in (("DRAM", color), ("L2", "none")):
            pts = sub[(sub["resident"] == where) & aligned[sub.index]]
            ax.scatter(pts["mib"], pts["pct_of_memcpy"], facecolors=face, edgecolors=color,
                       label=f"{dtype} ({where})" if len(pts) else None, zorder=3)
        odd = sub[~aligned[sub.index]]
        ax.scatter(odd["mib"], odd["pct_of_memcpy"], marker="x", color=color, zorder=3)
    ax.set_xscale("log")
    ax.set_xlabel("MiB read + written per transpose (log scale); hollow: fits in L2; x: rows or cols not a "
                  "multiple of 32", fontsize=8)
    ax.set_ylabel("best stage, % of memcpy")
    ax.legend(fontsize=7, ncols=2)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


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


# ---------------------------------------------------------------------------------------------
# Output


def render_html(page: Page) -> str:
    """The page through ``templates/report.html.j2`` (autoescape on, undefined names are errors)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["code"] = inline_code
    return env.get_template("report.html.j2").render(page=page)


_BACKTICKS = re.compile(r"`([^`]+)`")


def inline_code(text: str) -> markupsafe.Markup:
    """Escape ``text`` and turn `backticked` spans (as the manifest writes code) into <code>."""
    escaped = str(markupsafe.escape(text))
    return markupsafe.Markup(_BACKTICKS.sub(r"<code>\1</code>", escaped))


def write_outputs(folder: Path, page: Page, analysis: Analysis) -> list[Path]:
    """Write index.html, summary.csv and summary.json into ``folder`` together (all temporary files
    first, then the renames); return their paths.

    Raises:
        OSError: the folder cannot be written.
    """
    html = render_html(page)
    files: dict[Path, str] = {
        folder / "index.html": html,
        folder / "summary.csv": analysis.summary.to_csv(index=False),
        folder / "summary.json": json.dumps({
            "columns": {c.name: {"unit": c.unit, "source": c.source} for c in (*HEADLINE, *TIMING_COLUMNS)},
            "stages": _records(analysis.summary),
            "expectations": _records(analysis.expectations),
            "deltas": _records(analysis.deltas),
        }, indent=2, default=str) + "\n",
    }
    atomic_write_many(files)
    return list(files)


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{%|%\}")


def has_placeholder(html: str) -> bool:
    """True when template syntax leaked into the output."""
    return bool(_PLACEHOLDER.search(html))

