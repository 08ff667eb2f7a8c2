"""The report's charts as inline SVG (matplotlib, Agg): bandwidth per stage (event-timed GB/s, or
the profiled DRAM throughput without timings), stall reasons per stage on one shared axis, the
bench and sweep charts of bench.json / sweep.json; each chart's data first, then its drawing.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis
from profiler_report.analysis.sweeps import shape_table, sweep_table
from profiler_report.report import roofline
from profiler_report.util.fmt import fmt
from profiler_report.util.frames import tuples


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # keep text as text: smaller files, searchable
    plt.rcParams["svg.hashsalt"] = "profiler-report"  # stable ids, so reports diff cleanly
    return plt


def bandwidth_chart_data(summary: pd.DataFrame, timings: list[dict[str, Any]] | None,
                         wrong: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Bars for the bandwidth chart: label, gbps, kind ("stage"|"ceiling"), source.

    Event-timed GB/s when timings exist (memcpy and the copy kernel as ceilings), otherwise the
    profiled DRAM throughput ``(dram__bytes_read.sum + dram__bytes_write.sum) / duration``: the
    summary's figures, the ones the ladder table shows. A stage in ``wrong`` (it failed
    validation) gets NaN: no bar, as no speed is claimed for it.
    """
    rows = []
    use_events = "event_gbps" in summary and summary["event_gbps"].notna().any()
    for r in tuples(summary):
        val = math.nan if r.stage in wrong else r.event_gbps if use_events else r.dram_throughput_gbps
        rows.append({"label": r.stage, "gbps": float(val), "kind": r.role,
                     "source": "CUDA events" if use_events else "ncu DRAM throughput"})
    if use_events:
        for t in timings or []:
            if t["name"] == "memcpy":
                rows.append({"label": "memcpy", "gbps": float(t["gbps"]), "kind": "ceiling", "source": "CUDA events"})
    return pd.DataFrame(rows, columns=["label", "gbps", "kind", "source"])


#: Stall reasons drawn per stage.
STALL_TOP = 8


def stall_chart_data(stalls: pd.DataFrame, stage: str, top: int = STALL_TOP) -> pd.DataFrame:
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
    for r in tuples(data):
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
    """The chart with nothing highlighted; bar ``i`` (data order) is the SVG group ``bar-i``.
    A value that is not finite draws no bar (as a missing one); all 0 draws an empty axis."""
    gbps = data["gbps"].astype(float).map(lambda v: v if math.isfinite(v) else math.nan)
    if data.empty or gbps.isna().all():
        return ""
    fig, ax = _bar_figure(0.32 * len(data) + 0.9)
    y = list(range(len(data)))[::-1]
    bars = ax.barh(y, gbps.fillna(0), color=bar_colors(data), hatch=None)
    for i, bar in enumerate(bars):
        bar.set_gid(f"bar-{i}")
    ax.set_yticks(y, data["label"])
    for yi, v in zip(y, gbps, strict=True):
        if not math.isnan(v):
            ax.text(v, yi, " " + fmt(v, "GB/s"), va="center", fontsize=8)
    source = data["source"].iloc[0] if data["source"].nunique() == 1 else "timing source per entry in the table"
    ax.set_xlabel(f"GB/s ({source}; bytes read + written)")
    ax.spines[["top", "right"]].set_visible(False)
    top = float(gbps.max()) or 1.0  # all 0: matplotlib warns of identical limits
    ax.set_xlim(0, top * 1.15 if math.isfinite(top * 1.15) else top)
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


def stall_axis_max(stalls: pd.DataFrame, top: int = STALL_TOP) -> float:
    """The value axis limit every stage's stall chart shares (cycles per issued instruction): the
    largest bar of any stage plus 10 %, so that the charts compare at a glance; 0 when none."""
    if stalls.empty:
        return 0.0
    peak = max((float(stall_chart_data(stalls, sid, top)["cycles_per_issue"].max())
                for sid in stalls["stage"].unique()), default=0.0)
    return peak * 1.1 if math.isfinite(peak) and peak > 0 else 0.0


def draw_stalls(data: pd.DataFrame, stage: str, xmax: float = 0.0) -> str:
    """Bars of stall cycles per issued instruction for one stage, the value axis 0..``xmax`` when
    given (:func:`stall_axis_max`: one scale across stages). Returns SVG text."""
    if data.empty:
        return ""
    fig, ax = _bar_figure(0.28 * len(data) + 0.9)
    y = list(range(len(data)))[::-1]
    ax.barh(y, data["cycles_per_issue"], color="#c05621")
    ax.set_yticks(y, data["reason"])
    ax.set_xlabel(f"{stage}: warp stall cycles per issued instruction (one scale for every stage)", fontsize=8)
    if xmax > 0:
        ax.set_xlim(0, xmax)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


#: A chart job: the function that draws it and its arguments (both must pickle, for ChartPool);
#: sidecar_chart_jobs and capture_chart_jobs make them, a ChartPool runs them, build_page places them.
ChartJob = tuple[Callable[..., Any], tuple[Any, ...]]


def sidecar_chart_jobs(bench: list[dict[str, Any]] | None = None,
                       sweep: list[dict[str, Any]] | None = None) -> dict[str, ChartJob]:
    """The charts drawn from a live run's bench.json and sweep.json alone: they need no capture,
    so they can be drawn while it is read."""
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


def capture_chart_jobs(analysis: Analysis, timings: list[dict[str, Any]] | None = None,
                       wrong: frozenset[str] = frozenset()) -> dict[str, ChartJob]:
    """The charts drawn from the analysis (the bandwidth overview: no bar for a stage in
    ``wrong``, which failed validation; stalls per stage), as jobs for a
    :class:`~profiler_report.report.chart_pool.ChartPool`."""
    summary = analysis.summary
    stage_ids = list(summary.loc[summary["role"] == "stage", "stage"])
    jobs: dict[str, ChartJob] = {
        "bandwidth": (draw_bandwidth, (bandwidth_chart_data(summary, timings, wrong),)),
    }
    if not analysis.roofline.empty:
        jobs["roofline"] = (roofline.draw, (roofline.chart_data(analysis.roofline),))
    xmax = stall_axis_max(analysis.stalls)
    for sid in stage_ids:
        jobs[f"stalls:{sid}"] = (draw_stalls, (stall_chart_data(analysis.stalls, sid, STALL_TOP), sid, xmax))
    return jobs


def chart_jobs(analysis: Analysis, timings: list[dict[str, Any]] | None = None,
               bench: list[dict[str, Any]] | None = None,
               sweep: list[dict[str, Any]] | None = None) -> dict[str, ChartJob]:
    """Every chart job of one page."""
    return {**sidecar_chart_jobs(bench, sweep), **capture_chart_jobs(analysis, timings)}


def draw_quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """Run one chart job without numeric warnings, and None (no chart) when its values cannot
    be drawn: a finite but huge value (1e308 GB/s) overflows inside matplotlib's transforms,
    which warns and may raise; the table beside the chart still shows every number."""
    import warnings

    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return fn(*args)
        except (ValueError, OverflowError, FloatingPointError):
            pyplot().close("all")
            return None


def draw_here(jobs: dict[str, ChartJob]) -> dict[str, Any]:
    """Run chart jobs in this process (0.05-0.4 s a chart; :class:`ChartPool` runs them side by side)."""
    return {key: draw_quietly(fn, *args) for key, (fn, args) in jobs.items()}


def peers_chart_data(bench: list[dict[str, Any]]) -> pd.DataFrame:
    """Bars for the 'versus peers' chart from bench.json rows at the headline size.

    Columns as :func:`bandwidth_chart_data`; stages dark, peers light, memcpy and copies as ceilings;
    rows that were skipped or wrong are left out.
    """
    rows = []
    for r in bench:
        gbps = r.get("gbps")
        if gbps is None or gbps != gbps or r.get("note", "").startswith("WRONG") or r["kind"] == "config":
            continue
        kind = {"peer": "stage-other", "stage": "stage"}.get(r["kind"], "ceiling")
        rows.append({"label": r["name"], "gbps": float(gbps), "kind": kind,
                     "source": "CUDA events" if r.get("timing") == "cuda-events" else r.get("timing", "")})
    frame = pd.DataFrame(rows, columns=["label", "gbps", "kind", "source"])
    return frame.sort_values("gbps", ascending=False).reset_index(drop=True)


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


def sweep_grid(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """A :func:`~profiler_report.report.tables.sweep_table` column as a size x dtype grid: one row
    per size (ordered by elements), one column per dtype; NaN where the sweep has no value."""
    order = frame.assign(elements=frame["rows"] * frame["cols"]).sort_values("elements", kind="stable")
    sizes = list(dict.fromkeys(order["size"]))
    dtypes = sorted(frame["dtype"].unique(), key=lambda d: ("float16", "float32", "float64").index(d)
                    if d in ("float16", "float32", "float64") else 9)
    return frame.pivot_table(index="size", columns="dtype", values=column, aggfunc="first",
                             dropna=False).reindex(index=sizes, columns=dtypes)


def draw_sweep(frame: pd.DataFrame) -> str:
    """Two heat maps of size (rows) x dtype (columns) from a sweep_table: left, best stage GB/s /
    fastest peer GB/s at that size and dtype (blue: the stage leads, red: a peer wins; grey: no
    peer ran); right, the best stage's % of the ceiling its point is judged against (memcpy at
    DRAM points, the fastest same-size copy at L2 ones). Cells annotated; "L2" marks L2-resident
    points. Returns SVG text."""
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm

    ratio, pct = sweep_grid(frame, "vs_peer"), sweep_grid(frame, "pct_of_ceiling")
    where = sweep_grid(frame, "resident")
    plt = pyplot()
    height = 0.3 * len(ratio) + 1.4
    fig, axes = plt.subplots(1, 2, figsize=(7.5, height))
    fig.subplots_adjust(left=0.15, right=0.98, top=1 - 0.75 / height, bottom=0.04, wspace=0.35)
    spread = float(np.nanmax(np.abs(ratio.to_numpy(dtype=float) - 1))) if ratio.notna().any().any() else 0.1
    spread = min(max(spread, 0.05), 1.0)
    panels = ((axes[0], ratio, "best stage / fastest peer", "RdBu", TwoSlopeNorm(1.0, 1 - spread, 1 + spread),
               lambda v: f"{v:.3f}x", "no peer"),
              (axes[1], pct, "best stage, % of its ceiling", "viridis", None, lambda v: f"{v:.1f}%", ""))
    for ax, grid, title, cmap, norm, text, empty in panels:
        values = np.ma.masked_invalid(grid.to_numpy(dtype=float))
        cm = plt.get_cmap(cmap).with_extremes(bad="#dddddd")
        kw = {"norm": norm} if norm is not None else {"vmin": 80.0, "vmax": 100.0}
        ax.imshow(values, cmap=cm, aspect="auto", **kw)
        ax.set_xticks(range(grid.shape[1]), list(grid.columns), fontsize=8)
        ax.set_yticks(range(grid.shape[0]), list(grid.index), fontsize=7)
        ax.xaxis.tick_top()
        ax.set_title(title, fontsize=8, pad=16)
        for (i, j), v in np.ndenumerate(grid.to_numpy(dtype=float)):
            tag = " L2" if where.iloc[i, j] == "L2" else ""
            dark = abs(v - 1) > 0.6 * spread if norm is not None else v < 90  # text on dark cells: white
            ax.text(j, i, (text(v) if v == v else empty) + tag, ha="center", va="center", fontsize=6.5,
                    color="white" if v == v and dark else "black")
    return _svg(fig)

