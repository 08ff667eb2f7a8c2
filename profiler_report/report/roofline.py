"""The page's roofline section: a log-log chart of every launch (achieved FLOP/s against its
arithmetic intensity at DRAM, L2 and L1) under the capture's own roofs, and its table.

The numbers come from :func:`profiler_report.analysis.roofline.roofline_table`; this module only
lays them out. The roofs drawn are those of the launches' median clocks (each launch's own roofs
are in the table); a launch without floating-point work cannot sit on the intensity axis and is
named in a note with its DRAM throughput; where no launch does any (a transpose), the chart places
each launch's DRAM, L2 and L1 throughput under the memory roofs instead.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

#: Markers of the three intensities of one launch.
MARKERS = {"dram": "o", "l2": "^", "l1": "s"}
ROOF_COLOR, SLOPE_COLORS = "#444444", {"dram": "#2b6cb0", "l2": "#38a169", "l1": "#d69e2e"}


@dataclass(frozen=True)
class RooflineChartData:
    """What the chart draws: ``points`` (stage, role, level, ai, flops_per_s: one row per launch
    and level with finite, positive values), the roofs (FLOP/s; byte/s per level; the tensor roof
    NaN when no launch used the tensor cores), the launches without floating-point work
    (stage, DRAM % of peak) and their traffic (``memory``: stage, role, level, bytes_per_s), which
    sits under the memory roofs alone."""

    points: pd.DataFrame
    peak_fp32: float
    peak_tensor: float
    peak_bytes: dict[str, float]
    no_work: tuple[tuple[str, float], ...]
    memory: pd.DataFrame


def chart_data(table: pd.DataFrame) -> RooflineChartData:
    """:class:`RooflineChartData` from a roofline table (its documented columns)."""
    rows = []
    records = table.to_dict("records")
    for r in records:
        for level in MARKERS:
            ai, y = float(r[f"ai_{level}"]), float(r["flops_per_s"])
            if math.isfinite(ai) and math.isfinite(y) and ai > 0 and y > 0:
                rows.append({"stage": r["stage"], "role": r["role"], "level": level, "ai": ai, "flops_per_s": y})
    no_work = tuple((str(r["stage"]), 100 * float(r["dram_bytes_per_s"]) / float(r["peak_dram_bytes_per_s"]))
                    for r in records if r["bound"] == "no work")
    memory = [{"stage": r["stage"], "role": r["role"], "level": level, "bytes_per_s": float(r[f"{level}_bytes_per_s"])}
              for r in records if r["bound"] == "no work" for level in MARKERS
              if math.isfinite(float(r[f"{level}_bytes_per_s"])) and float(r[f"{level}_bytes_per_s"]) > 0]
    return RooflineChartData(
        pd.DataFrame(rows, columns=["stage", "role", "level", "ai", "flops_per_s"]),
        float(table["peak_fp32_flops_per_s"].median()) if len(table) else math.nan,
        float(table["peak_tensor_flops_per_s"].median())
        if table["peak_tensor_flops_per_s"].notna().any() else math.nan,
        {level: float(table[f"peak_{level}_bytes_per_s"].median()) if len(table) else math.nan for level in MARKERS},
        no_work,
        pd.DataFrame(memory, columns=["stage", "role", "level", "bytes_per_s"]),
    )


def _pyplot() -> Any:
    """matplotlib.pyplot on Agg with the page's SVG settings (as report/charts.py sets them; this
    module sits below charts.py, which lists its job)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["svg.hashsalt"] = "profiler-report"
    return plt


def _svg(plt: Any, fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def draw(data: RooflineChartData) -> str:
    """The log-log chart as SVG text; the memory roofs alone (:func:`draw_memory`) when no launch
    did floating-point work; "" when there is nothing to place."""
    if data.points.empty:
        return draw_memory(data) if not data.memory.empty else ""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    fig.subplots_adjust(left=0.12, right=0.70, top=0.95, bottom=0.12)
    lo = min(float(data.points["ai"].min()) / 4, 0.05)
    hi = max(float(data.points["ai"].max()) * 4, 1000.0)
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    roofs = [(data.peak_fp32, "FP32 roof", ROOF_COLOR)]
    if math.isfinite(data.peak_tensor):
        roofs.append((data.peak_tensor, "tensor roof", "#805ad5"))
    top = max(p for p, _, _ in roofs if math.isfinite(p))
    for level, bw in data.peak_bytes.items():
        if math.isfinite(bw):
            ax.plot(xs, [min(x * bw, top) for x in xs], color=SLOPE_COLORS[level], lw=1.2,
                    label=f"{level.upper()} {bw / 1e12:.2f} TB/s")
    for peak, label, color in roofs:
        if math.isfinite(peak):
            ax.axhline(peak, color=color, lw=1.2, ls="--", label=f"{label} {peak / 1e12:.1f} TFLOP/s")
    cmap = plt.get_cmap("tab10")
    for i, (stage, grp) in enumerate(data.points.groupby("stage", sort=False)):
        color = "#888888" if grp["role"].iloc[0] == "ceiling" else cmap(i % 10)
        ax.plot(grp["ai"], grp["flops_per_s"], color=color, lw=0.6, alpha=0.6)
        for g in grp.to_dict("records"):
            ax.scatter([g["ai"]], [g["flops_per_s"]], marker=MARKERS[str(g["level"])], color=color, s=22, zorder=3,
                       label=stage if g["level"] == "dram" else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(float(data.points["flops_per_s"].min()) / 4, top * 2)
    ax.set_xlabel("arithmetic intensity (FLOP/byte): o DRAM, ^ L2, s L1")
    ax.set_ylabel("achieved FLOP/s")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(plt, fig)


def draw_memory(data: RooflineChartData) -> str:
    """The roofline of launches that do no floating-point work (a copy, a transpose): their
    achieved DRAM, L2 and L1 throughput (o ^ s, as on the log-log chart) per launch, under the
    same capture's roof of each level (dashed lines)."""
    plt = _pyplot()
    stages = list(dict.fromkeys(data.memory["stage"]))
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    fig.subplots_adjust(left=0.10, right=0.72, top=0.95, bottom=0.30)
    for level, bw in data.peak_bytes.items():
        if math.isfinite(bw):
            ax.axhline(bw / 1e12, color=SLOPE_COLORS[level], lw=1.2, ls="--", label=f"{level.upper()} roof "
                       f"{bw / 1e12:.2f} TB/s")
    for key, grp in data.memory.groupby("level", sort=False):
        name = str(key)
        xs = [stages.index(s) for s in grp["stage"]]
        ax.scatter(xs, grp["bytes_per_s"] / 1e12, marker=MARKERS[name], color=SLOPE_COLORS[name], s=24,
                   zorder=3, label=f"{name.upper()} achieved")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, NullFormatter

    # Plain tick labels: mathtext ones leave "}}" in the SVG's comments, which reads as template syntax.
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(range(len(stages)), stages, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("achieved bytes/s (TB/s), log scale")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(plt, fig)


@dataclass(frozen=True)
class Roofline:
    """The roofline section: the chart, one row per launch (stage, achieved TFLOP/s, intensities,
    the roof above it, % of that roof, bound) and the notes (where the roofs come from, the
    launches without floating-point work)."""

    rows: tuple[dict[str, str], ...]
    notes: tuple[str, ...]
    svg: str
    anchor: str = "roofline"
    title: str = "Roofline"
    folded: bool = False
    template: ClassVar[str] = "_section_roofline.html.j2"


def _rows(table: pd.DataFrame) -> tuple[dict[str, str], ...]:
    def num(x: Any, digits: int = 2) -> str:
        return "n/a" if x is None or not math.isfinite(float(x)) else f"{float(x):.{digits}f}"

    return tuple({"stage": str(r["stage"]), "tflops": num(float(r["flops_per_s"]) / 1e12, 3),
                  "ai_dram": num(r["ai_dram"]), "ai_l2": num(r["ai_l2"]), "ai_l1": num(r["ai_l1"]),
                  "roof_tflops": num(float(r["attainable_flops_per_s"]) / 1e12, 2),
                  "pct_of_roof": num(r["pct_of_roof"], 1), "clock_ghz": num(float(r["sm_clock_hz"]) / 1e9, 3),
                  "bound": str(r["bound"])} for r in table.to_dict("records"))


def roofline_section(table: pd.DataFrame, svg: str) -> Roofline | None:
    """The section from a roofline table and its drawn chart; None when no launch holds the
    roofline metrics (a capture not made with ``--set full``)."""
    if table.empty or table["peak_fp32_flops_per_s"].isna().all():
        return None
    data = chart_data(table)
    clocks = table["sm_clock_hz"].dropna() / 1e9
    notes = [f"Roofs from the capture's peak metrics at each launch's own clock (SM {clocks.min():.2f}-"
             f"{clocks.max():.2f} GHz here); the chart draws them at the median clock. Work: FADD + FMUL + 2 FFMA "
             "(and FP64, tensor-core ops) from the SASS counters; L2 and L1 traffic as ncu's roofline counts it."]
    if data.no_work and data.points.empty:
        notes.append("No launch here does floating-point work, so none has an arithmetic intensity: the chart "
                     "places each launch's DRAM, L2 and L1 throughput under the memory roofs of the same capture.")
    notes += [f"{stage}: no floating-point work (integer and memory instructions only), so no point on a log "
              f"axis; its DRAM traffic ran at {pct:.0f} % of the DRAM peak." for stage, pct in data.no_work]
    return Roofline(_rows(table), tuple(notes), svg)
