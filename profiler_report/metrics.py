"""The metric registry: every headline column of the per-stage summary, declared once."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any


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
