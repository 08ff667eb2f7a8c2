"""Analyze stage: per-stage headline metrics, deltas, stall reasons, verdicts, rule changes.

Input is a :class:`~profiler_report.extract.Capture` (either reader) plus, for live runs, the
event timings. Every number below names its Nsight Compute source; nothing is hard-coded.
A value the capture does not hold stays NaN ("not measured"), never 0.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .config import Manifest, Stage
from .errors import InputError
from .extract import Capture


@dataclass(frozen=True)
class Column:
    """A headline column of the per-stage summary."""

    name: str
    unit: str
    source: str          # ncu metric(s) or formula
    better: str = ""     # "lower", "higher" or "" (no direction)
    label: str = ""      # how the report names it


def _c(name: str, unit: str, source: str, better: str = "", label: str = "") -> Column:
    return Column(name, unit, source, better, label or name.replace("_", " "))


#: The summary's metric columns, in report order. Units are in the names where they apply.
HEADLINE: tuple[Column, ...] = (
    _c("duration_us", "us", "gpu__time_duration.sum / 1000 (profiled launch: ncu flushes caches "
       "before each replay pass)", "lower", "duration (ncu, us)"),
    _c("dram_read_bytes", "byte", "dram__bytes_read.sum", "", "DRAM bytes read"),
    _c("dram_write_bytes", "byte", "dram__bytes_write.sum", "", "DRAM bytes written"),
    _c("dram_throughput_gbps", "GB/s", "(dram__bytes_read.sum + dram__bytes_write.sum) / "
       "gpu__time_duration.sum", "higher", "DRAM throughput (GB/s)"),
    _c("dram_throughput_pct_peak", "%", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
       "higher", "DRAM throughput (% of peak)"),
    _c("achieved_occupancy_pct", "%", "sm__warps_active.avg.pct_of_peak_sustained_active", "",
       "achieved occupancy (%)"),
    _c("theoretical_occupancy_pct", "%", "sm__maximum_warps_per_active_cycle_pct", "", "theoretical occupancy (%)"),
    _c("registers_per_thread", "register", "launch__registers_per_thread", "", "registers per thread"),
    _c("shared_mem_per_block_bytes", "byte", "launch__shared_mem_per_block_static + "
       "launch__shared_mem_per_block_dynamic", "", "shared memory per block (bytes)"),
    _c("shared_load_instructions", "inst", "smsp__sass_inst_executed_op_shared_ld.sum", "", "shared load instructions"),
    _c("shared_store_instructions", "inst", "smsp__sass_inst_executed_op_shared_st.sum", "",
       "shared store instructions"),
    _c("shared_load_wavefronts", "wavefront", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "lower",
       "shared load wavefronts"),
    _c("shared_store_wavefronts", "wavefront", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "lower",
       "shared store wavefronts"),
    _c("shared_wavefronts_per_load", "wavefront/inst", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / "
       "smsp__sass_inst_executed_op_shared_ld.sum", "lower", "shared wavefronts per load"),
    _c("shared_wavefronts_per_store", "wavefront/inst", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum / "
       "smsp__sass_inst_executed_op_shared_st.sum", "lower", "shared wavefronts per store"),
    _c("shared_ideal_wavefronts", "wavefront", "memory_l1_wavefronts_shared_ideal", "", "ideal shared wavefronts"),
    _c("shared_excessive_wavefronts", "wavefront", "derived__memory_l1_wavefronts_shared_excessive, or computed as "
       "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum - memory_l1_wavefronts_shared_ideal", "lower",
       "excessive shared wavefronts (bank conflicts)"),
    _c("bank_conflicts_ld_raw", "", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum (raw hardware "
       "counter: not zero on conflict-free code; no verdict rests on it)", "", "raw bank-conflict counter, loads"),
    _c("bank_conflicts_st_raw", "", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum (raw hardware "
       "counter: not zero on conflict-free code; no verdict rests on it)", "", "raw bank-conflict counter, stores"),
    _c("global_load_efficiency_pct", "%", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio / 32 "
       "* 100", "higher", "global load efficiency (%)"),
    _c("global_store_efficiency_pct", "%", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio / 32 "
       "* 100", "higher", "global store efficiency (%)"),
    _c("global_load_sectors_per_request", "sector/request", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
       "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "", "global load sectors per request"),
    _c("global_store_sectors_per_request", "sector/request", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum / "
       "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "", "global store sectors per request"),
    _c("l2_excessive_sectors", "sector", "derived__memory_l2_theoretical_sectors_global_excessive", "lower",
       "excessive L2 sectors (uncoalesced global)"),
)
HEADLINE_BY_NAME = {c.name: c for c in HEADLINE}

#: Excessive shared wavefronts by side, from per-instruction values (.ncu-rep only; NaN for CSV).
BY_SIDE_COLUMNS: tuple[Column, ...] = (
    _c("shared_excessive_wavefronts_ld", "wavefront", "derived__memory_l1_wavefronts_shared_excessive summed over "
       "the load instructions (LDS*) of the per-instruction (source) values; .ncu-rep only", "lower",
       "excessive shared wavefronts, load side"),
    _c("shared_excessive_wavefronts_st", "wavefront", "derived__memory_l1_wavefronts_shared_excessive summed over "
       "the store instructions (STS*, LDGSTS) of the per-instruction (source) values; .ncu-rep only", "lower",
       "excessive shared wavefronts, store side"),
)

#: Event-timing columns added when timings are available (live runs).
TIMING_COLUMNS: tuple[Column, ...] = (
    _c("event_median_us", "us", "CUDA events: median of N launches (warm, buffers rotated)", "lower",
       "event-timed median (us)"),
    _c("event_p10_us", "us", "CUDA events: 10th percentile", "lower", "event p10 (us)"),
    _c("event_p90_us", "us", "CUDA events: 90th percentile", "lower", "event p90 (us)"),
    _c("event_gbps", "GB/s", "2 * rows * cols * itemsize / event_median_us", "higher", "event-timed GB/s"),
    _c("pct_of_copy_kernel", "%", "event_gbps / GB/s of the tiled copy kernel", "higher", "% of copy kernel"),
    _c("pct_of_memcpy", "%", "event_gbps / GB/s of cudaMemcpy device-to-device", "higher", "% of memcpy"),
)

#: Where a missing metric comes from: the ncu option that collects it.
COLLECTED_BY = {
    "gpu__time_duration.sum": "--section SpeedOfLight (in every --set)",
    "dram__bytes_read.sum": "--section MemoryWorkloadAnalysis (--set full)",
    "dram__bytes_write.sum": "--section MemoryWorkloadAnalysis (--set full)",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "--section SpeedOfLight",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "--section Occupancy",
    "sm__maximum_warps_per_active_cycle_pct": "--section Occupancy",
    "launch__registers_per_thread": "--section LaunchStats",
    "memory_l1_wavefronts_shared_ideal": "--section SourceCounters (--set full)",
    "derived__memory_l1_wavefronts_shared_excessive": "--section SourceCounters (--set full)",
    "derived__memory_l2_theoretical_sectors_global_excessive": "--section SourceCounters (--set full)",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": "--section SourceCounters (--set full)",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio": "--section SourceCounters (--set full)",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "--section MemoryWorkloadAnalysis_Tables (--set full)",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "--section MemoryWorkloadAnalysis_Tables (--set full)",
    "smsp__sass_inst_executed_op_shared_ld.sum": "--section InstructionStats / MemoryWorkloadAnalysis_Tables",
    "smsp__sass_inst_executed_op_shared_st.sum": "--section InstructionStats / MemoryWorkloadAnalysis_Tables",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "--section MemoryWorkloadAnalysis_Tables (--set full)",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "--section MemoryWorkloadAnalysis_Tables (--set full)",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "--section MemoryWorkloadAnalysis_Tables (--set full)",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "--section MemoryWorkloadAnalysis_Tables (--set full)",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "--section WarpStateStats",
}

STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
SECTOR_BYTES = 32.0


# ---------------------------------------------------------------------------------------------
# Stages


def assign_stages(capture: Capture, labels: list[tuple[str, str]] | None = None,
                  manifest: Manifest | None = None) -> pd.DataFrame:
    """One row per launch with its ``stage`` label and ``role`` ("stage" or "ceiling"), launch order.

    Labels, first match wins: ``labels`` (LABEL, REGEX) pairs searched in the kernel name and the
    NVTX range; our own NVTX ranges ``pr_<stage>``; else the kernel name (``#2``... when repeated).
    Launches that match no ``labels`` entry are dropped when ``labels`` is given.

    Raises:
        InputError: a REGEX is invalid, or ``labels`` matched no launch at all.
    """
    launches = capture.launches()
    compiled = []
    for label, pattern in labels or []:
        try:
            compiled.append((label, re.compile(pattern)))
        except re.error as exc:
            raise InputError(f"--stage {label}={pattern}: bad regular expression ({exc})") from exc
    out, seen = [], {}
    for row in launches.itertuples():
        stage = _label(row, compiled)
        if stage is None:
            continue
        seen[stage] = seen.get(stage, 0) + 1
        if seen[stage] > 1:
            stage = f"{stage}#{seen[stage]}"
        ceiling = manifest is not None and stage == manifest.ceiling.id
        out.append({**row._asdict(), "stage": stage, "role": "ceiling" if ceiling else "stage"})
    frame = pd.DataFrame(out)
    if compiled and frame.empty:
        raise InputError("no launch matched any --stage pattern",
                         "kernels in the capture: " + ", ".join(sorted(set(launches["kernel"]))))
    return frame.drop(columns=["Index"], errors="ignore")


def _label(row: Any, compiled: list[tuple[str, re.Pattern[str]]]) -> str | None:
    if compiled:
        for label, rx in compiled:
            if rx.search(row.kernel) or rx.search(row.nvtx_range or ""):
                return label
        return None
    from .run import NVTX_PREFIX

    for part in reversed((row.nvtx_range or "").split("/")):
        if part.startswith(NVTX_PREFIX):
            return part[len(NVTX_PREFIX):]
    return row.kernel


# ---------------------------------------------------------------------------------------------
# Headline table


def _ratio(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return a / b


def headline_row(v: dict[str, float]) -> dict[str, Any]:
    """Headline metrics of one launch from its metric values ``v`` (metric name -> base-unit value)."""
    g = lambda name: v.get(name, math.nan)  # noqa: E731
    dur_ns = g("gpu__time_duration.sum")
    rd, wr = g("dram__bytes_read.sum"), g("dram__bytes_write.sum")
    excessive = g("derived__memory_l1_wavefronts_shared_excessive")
    excessive_source = "ncu"
    if math.isnan(excessive):
        total = g("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        if math.isnan(total):
            total = g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") + g(
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
        excessive = max(total - g("memory_l1_wavefronts_shared_ideal"), 0.0)
        excessive_source = "not collected" if math.isnan(excessive) else "computed"
    smem = g("launch__shared_mem_per_block_static")
    dyn = g("launch__shared_mem_per_block_dynamic")
    return {
        "duration_us": dur_ns / 1e3,
        "dram_read_bytes": rd,
        "dram_write_bytes": wr,
        "dram_throughput_gbps": _ratio(rd + wr, dur_ns),
        "dram_throughput_pct_peak": g("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
        "achieved_occupancy_pct": g("sm__warps_active.avg.pct_of_peak_sustained_active"),
        "theoretical_occupancy_pct": g("sm__maximum_warps_per_active_cycle_pct"),
        "registers_per_thread": g("launch__registers_per_thread"),
        "shared_mem_per_block_bytes": smem + (0.0 if math.isnan(dyn) else dyn),
        "shared_load_instructions": g("smsp__sass_inst_executed_op_shared_ld.sum"),
        "shared_store_instructions": g("smsp__sass_inst_executed_op_shared_st.sum"),
        "shared_load_wavefronts": g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
        "shared_store_wavefronts": g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
        "shared_wavefronts_per_load": _ratio(g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                                             g("smsp__sass_inst_executed_op_shared_ld.sum")),
        "shared_wavefronts_per_store": _ratio(g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
                                              g("smsp__sass_inst_executed_op_shared_st.sum")),
        "shared_ideal_wavefronts": g("memory_l1_wavefronts_shared_ideal"),
        "shared_excessive_wavefronts": excessive,
        "shared_excessive_source": excessive_source,
        "bank_conflicts_ld_raw": g("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        "bank_conflicts_st_raw": g("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
        "global_load_efficiency_pct": g("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio")
        / SECTOR_BYTES * 100,
        "global_store_efficiency_pct": g("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio")
        / SECTOR_BYTES * 100,
        "global_load_sectors_per_request": _ratio(g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                                                  g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
        "global_store_sectors_per_request": _ratio(g("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                                                   g("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")),
        "l2_excessive_sectors": g("derived__memory_l2_theoretical_sectors_global_excessive"),
    }


def stall_reasons(values: dict[str, float]) -> dict[str, float]:
    """reason -> cycles per issued instruction, from every
    ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`` the launch holds."""
    out = {}
    for name, val in values.items():
        m = STALL_RE.match(name)
        if m and not math.isnan(val):
            out[m.group(1)] = val
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def summarize(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Per-stage headline table, one row per stage in launch order.

    Columns: stage, role, kernel, launch_id, grid, block, every :data:`HEADLINE` column,
    ``shared_excessive_source`` ("ncu", "computed" or "not collected") and ``top_stalls``
    (the three largest stall reasons, "reason cycles-per-issue" joined by ", ").
    """
    wide = capture.wide()
    rows = []
    for st in stages.itertuples():
        values = wide.loc[st.launch_id].dropna().to_dict() if st.launch_id in wide.index else {}
        stalls = stall_reasons(values)
        top = ", ".join(f"{k} {v:.1f}" for k, v in list(stalls.items())[:3])
        rows.append({"stage": st.stage, "role": st.role, "kernel": st.kernel, "launch_id": st.launch_id,
                     "grid": st.grid, "block": st.block, **headline_row(values),
                     **excessive_by_side(capture.source, st.launch_id), "top_stalls": top})
    return pd.DataFrame(rows)


def excessive_by_side(source: pd.DataFrame, launch_id: int) -> dict[str, float]:
    """Excessive shared wavefronts of one launch split into the load and the store side.

    Sums the per-instruction values of ``derived__memory_l1_wavefronts_shared_excessive`` over
    the instructions whose SASS is a shared load (LDS*) or store (STS*, LDGSTS); NaN when the
    capture has no per-instruction values (CSV exports, or the metric was not collected).
    """
    out = {"shared_excessive_wavefronts_ld": math.nan, "shared_excessive_wavefronts_st": math.nan}
    if source is None or source.empty:
        return out
    sub = source[(source["launch_id"] == launch_id) & source["shared_excessive_wavefronts"].notna()]
    if sub.empty:
        return out
    for side, key in (("load", "shared_excessive_wavefronts_ld"), ("store", "shared_excessive_wavefronts_st")):
        out[key] = float(sub.loc[sub["side"] == side, "shared_excessive_wavefronts"].sum())
    return out


def stall_table(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Long table: stage, reason, cycles_per_issue (``smsp__average_warps_issue_stalled_*``)."""
    wide = capture.wide()
    rows = []
    for st in stages.itertuples():
        values = wide.loc[st.launch_id].dropna().to_dict() if st.launch_id in wide.index else {}
        for reason, val in stall_reasons(values).items():
            rows.append({"stage": st.stage, "reason": reason, "cycles_per_issue": val})
    return pd.DataFrame(rows, columns=["stage", "reason", "cycles_per_issue"])


def missing_metrics(capture: Capture) -> list[tuple[str, str]]:
    """(metric, how to collect it) for each metric the analysis reads that the capture lacks."""
    held = set(capture.metrics["metric"])
    return [(m, how) for m, how in COLLECTED_BY.items() if m not in held]


# ---------------------------------------------------------------------------------------------
# Event timings


def add_timings(summary: pd.DataFrame, timings: list[dict[str, Any]]) -> pd.DataFrame:
    """Join event timings (``timings.json`` entries, by stage id) onto the summary.

    ``pct_of_copy_kernel`` compares with the timing named like the ceiling row (role "ceiling",
    else "copy"); ``pct_of_memcpy`` with the entry named "memcpy".
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
        out.loc[i, "pct_of_copy_kernel"] = 100 * t["gbps"] / copy["gbps"] if copy else math.nan
        out.loc[i, "pct_of_memcpy"] = 100 * t["gbps"] / memcpy["gbps"] if memcpy else math.nan
    return out


# ---------------------------------------------------------------------------------------------
# Deltas, expectations, verdicts


def speed_column(summary: pd.DataFrame) -> str:
    """The time column a speed-up rests on: event timings when present, else ncu's duration."""
    if "event_median_us" in summary and summary["event_median_us"].notna().any():
        return "event_median_us"
    return "duration_us"


def deltas(summary: pd.DataFrame) -> pd.DataFrame:
    """Stage-to-stage changes between consecutive stages (role "stage" only).

    Columns: stage, previous, speedup (previous time / time, from :func:`speed_column`),
    speedup_ncu (from duration_us), excessive_wavefronts_removed, store_efficiency_gain_pts,
    load_efficiency_gain_pts.
    """
    stages = summary[summary["role"] == "stage"].reset_index(drop=True)
    col = speed_column(stages)
    rows = []
    for i in range(1, len(stages)):
        a, b = stages.iloc[i - 1], stages.iloc[i]
        rows.append({
            "stage": b["stage"], "previous": a["stage"],
            "speedup": _ratio(a[col], b[col]), "speedup_source": col,
            "speedup_ncu": _ratio(a["duration_us"], b["duration_us"]),
            "excessive_wavefronts_removed": a["shared_excessive_wavefronts"] - b["shared_excessive_wavefronts"],
            "store_efficiency_gain_pts": b["global_store_efficiency_pct"] - a["global_store_efficiency_pct"],
            "load_efficiency_gain_pts": b["global_load_efficiency_pct"] - a["global_load_efficiency_pct"],
        })
    return pd.DataFrame(rows, columns=["stage", "previous", "speedup", "speedup_source", "speedup_ncu",
                                       "excessive_wavefronts_removed", "store_efficiency_gain_pts",
                                       "load_efficiency_gain_pts"])


NO_EFFECT_REL = 0.05


def judge(old: float, new: float, direction: str, factor: float | None, to: float | None) -> tuple[str, str]:
    """Verdict on one expected movement: ("confirmed"|"refuted"|"no effect"|"not measured", why)."""
    if math.isnan(old) or math.isnan(new):
        return "not measured", "the capture lacks this metric for one of the two stages"
    scale = max(abs(old), abs(new), 1e-12)
    if abs(new - old) / scale < NO_EFFECT_REL and (to is None or not _near(new, to)):
        return "no effect", f"{_fmt(old)} -> {_fmt(new)} (changed by less than {NO_EFFECT_REL:.0%})"
    moved = f"{_fmt(old)} -> {_fmt(new)}"
    right_way = new < old if direction == "down" else new > old
    if to is not None and _near(new, to):
        return "confirmed", f"{moved}, reached {_fmt(to)}"
    if not right_way:
        return "refuted", f"{moved}: moved {'up' if direction == 'down' else 'down'}, expected {direction}"
    if factor is not None:
        got = old / new if direction == "down" else new / old
        if not got >= factor * (1 - 1e-9) and not (direction == "down" and new == 0):
            return "refuted", f"{moved}: {got:.2f}x, expected at least {factor:g}x"
    if to is not None:
        return "refuted", f"{moved}: expected to reach {_fmt(to)}"
    return "confirmed", moved


def _near(x: float, target: float) -> bool:
    if target == 0:
        return abs(x) < 0.5
    return abs(x - target) <= 0.10 * abs(target)


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    if abs(x) >= 1e6:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def judge_timing(prev: pd.Series, row: pd.Series, direction: str) -> tuple[str, str]:
    """Verdict on an expected time change, from the event timings' spread rather than a fixed 5 %.

    "confirmed" when the p10-p90 ranges of the two stages do not overlap and the median moved the
    expected way; "refuted" when they do not overlap and it moved the other way; else "no effect".
    Source: event_median_us, event_p10_us, event_p90_us (CUDA events, median of N launches).
    """
    med0, med1 = float(prev.get("event_median_us", math.nan)), float(row.get("event_median_us", math.nan))
    lo0, hi0 = float(prev.get("event_p10_us", math.nan)), float(prev.get("event_p90_us", math.nan))
    lo1, hi1 = float(row.get("event_p10_us", math.nan)), float(row.get("event_p90_us", math.nan))
    if any(math.isnan(x) for x in (med0, med1, lo0, hi0, lo1, hi1)):
        return judge(med0, med1, direction, None, None)
    moved = f"{_fmt(med0)} -> {_fmt(med1)} us (median; p10-p90 {_fmt(lo0)}-{_fmt(hi0)} -> {_fmt(lo1)}-{_fmt(hi1)})"
    if hi1 < lo0:
        return ("confirmed" if direction == "down" else "refuted"), moved + ": faster beyond the spread"
    if lo1 > hi0:
        return ("confirmed" if direction == "up" else "refuted"), moved + ": slower beyond the spread"
    return "no effect", moved + ": the ranges overlap"


def judge_expectations(summary: pd.DataFrame, manifest_stages: list[Stage]) -> pd.DataFrame:
    """Each manifest expectation judged against the summary (previous stage -> this stage).

    Columns: stage, previous, metric, text, old, new, verdict, why.
    """
    stages = summary[summary["role"] == "stage"].reset_index(drop=True)
    index = {s: i for i, s in enumerate(stages["stage"])}
    rows = []
    for st in manifest_stages:
        if st.id not in index or index[st.id] == 0:
            continue
        a, b = stages.iloc[index[st.id] - 1], stages.iloc[index[st.id]]
        for e in st.expect:
            metric = e.metric
            if metric == "duration_us":
                metric = speed_column(stages)
            old, new = float(a.get(metric, math.nan)), float(b.get(metric, math.nan))
            if metric == "event_median_us" and e.factor is None and e.to is None:
                verdict, why = judge_timing(a, b, e.direction)
            else:
                verdict, why = judge(old, new, e.direction, e.factor, e.to)
            rows.append({"stage": st.id, "previous": a["stage"], "metric": metric, "text": e.text,
                         "old": old, "new": new, "verdict": verdict, "why": why})
    return pd.DataFrame(rows, columns=["stage", "previous", "metric", "text", "old", "new", "verdict", "why"])


#: Metrics the one-line verdict mentions when they move, with how to phrase them.
_VERDICT_METRICS = (
    ("global_store_efficiency_pct", "global store efficiency", "%"),
    ("global_load_efficiency_pct", "global load efficiency", "%"),
    ("shared_wavefronts_per_load", "shared wavefronts per load", ""),
    ("shared_wavefronts_per_store", "shared wavefronts per store", ""),
    ("shared_excessive_wavefronts", "excessive shared wavefronts", ""),
    ("achieved_occupancy_pct", "achieved occupancy", "%"),
)


def _speed_phrase(prev: pd.Series, row: pd.Series, speed_col: str) -> str:
    """'1.39x faster than padded', or 'as fast as X within the run-to-run spread' when the event
    timings' p10-p90 ranges overlap."""
    sp = _ratio(prev[speed_col], row[speed_col])
    if math.isnan(sp):
        return "speed not measured"
    if speed_col == "event_median_us":
        lo0, hi0 = float(prev.get("event_p10_us", math.nan)), float(prev.get("event_p90_us", math.nan))
        lo1, hi1 = float(row.get("event_p10_us", math.nan)), float(row.get("event_p90_us", math.nan))
        if not any(math.isnan(x) for x in (lo0, hi0, lo1, hi1)) and hi1 >= lo0 and lo1 <= hi0:
            return f"as fast as {prev['stage']} within the run-to-run spread ({sp:.2f}x)"
    return f"{sp:.2f}x faster than {prev['stage']}" if sp >= 1 else f"{1 / sp:.2f}x slower than {prev['stage']}"


def stage_verdict(prev: pd.Series | None, row: pd.Series, speed_col: str) -> str:
    """One line, computed from the numbers: the speed change relative to ``prev`` (event timings
    judged with their spread), then the headline metrics that moved by more than 5 %, and the top
    stall reason when it changed. It lists what moved; the stage's expectations say why."""
    source = "event-timed median" if speed_col.startswith("event") else "ncu duration"
    if prev is None:
        return f"Baseline: {_fmt(row[speed_col])} us ({source})."
    parts = []
    for col, label, unit in _VERDICT_METRICS:
        a, b = float(prev.get(col, math.nan)), float(row.get(col, math.nan))
        if math.isnan(a) or math.isnan(b):
            continue
        if abs(b - a) > NO_EFFECT_REL * max(abs(a), abs(b), 1e-12) and abs(b - a) > 0.05:
            parts.append(f"{label} {_fmt(a)}{unit} -> {_fmt(b)}{unit}")
    top, prev_top = (str(r.get("top_stalls", "")).split(",")[0].strip().split(" ")[0] for r in (row, prev))
    if top and top != prev_top:
        parts.append(f"top stall {prev_top or 'n/a'} -> {top}")
    moved = ("; measured changes: " + "; ".join(parts)) if parts else "; no headline metric moved by more than 5%"
    return _speed_phrase(prev, row, speed_col) + moved + "."


# ---------------------------------------------------------------------------------------------
# Guided-analysis rule results


def rule_changes(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Which ncu rule findings (warnings/optimizations, by rule and title) appear or vanish per stage.

    Columns: stage, previous, change ("appears"|"vanishes"), rule, title, speedup_pct.
    """
    rules = capture.rules
    if rules.empty:
        return pd.DataFrame(columns=["stage", "previous", "change", "rule", "title", "speedup_pct"])
    only = stages[stages["role"] == "stage"].reset_index(drop=True)
    findings = rules[rules["type"].isin(["warning", "optimization", "error"])]

    def keyset(launch_id: int) -> dict[tuple[str, str], float]:
        sub = findings[findings["launch_id"] == launch_id]
        return {(r.rule, r.title): r.speedup_pct for r in sub.itertuples()}

    rows = []
    for i in range(1, len(only)):
        a, b = only.iloc[i - 1], only.iloc[i]
        ka, kb = keyset(a["launch_id"]), keyset(b["launch_id"])
        for key in sorted(kb.keys() - ka.keys()):
            rows.append({"stage": b["stage"], "previous": a["stage"], "change": "appears", "rule": key[0],
                         "title": key[1], "speedup_pct": kb[key]})
        for key in sorted(ka.keys() - kb.keys()):
            rows.append({"stage": b["stage"], "previous": a["stage"], "change": "vanishes", "rule": key[0],
                         "title": key[1], "speedup_pct": ka[key]})
    return pd.DataFrame(rows, columns=["stage", "previous", "change", "rule", "title", "speedup_pct"])


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
