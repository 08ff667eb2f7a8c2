"""The metric registry: every column of the per-stage summary, declared once.

A :class:`Column` holds a headline figure's name, unit, label, which way is better, and its
formula as code (:class:`Expr`: Nsight Compute metrics combined by division, sums, scaling). The
formula (:mod:`profiler_report.formulas`) also writes its own text and names the metrics it
reads, so the report's "Metric sources", ``summary.json``'s ``columns``, the gate's hints and the
"not collected" notes (:func:`collection_hints`) all come from the same declaration. Adding a
column is one entry in :data:`HEADLINE`.

:data:`NCU_METRICS` says, per raw ncu metric the formulas read, which ``--section`` collects it
and which entry of the details page (``--page details``) carries it; the roofline's own raw
metrics (:data:`~profiler_report.util.roofline_metrics.ROOFLINE_METRICS`) join it there.

This module imports only the standard library (and the formulas, and the roofline's metric table
in :mod:`profiler_report.util.roofline_metrics`): the capture readers use it too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from profiler_report.formulas import Diff, Expr, FirstOf, M, Product, Ratio, Scaled, Sum, Values, WhenNonZero
from profiler_report.formulas import ratio as ratio  # re-exported: the readers' and verdicts' division
from profiler_report.util.roofline_metrics import ROOFLINE_METRICS

#: Bytes of one L2/DRAM sector: the denominator of the global-access efficiency.
SECTOR_BYTES = 32.0


# ---------------------------------------------------------------------------------------------
# Columns


@dataclass(frozen=True)
class Column:
    """One column of the per-stage summary.

    ``formula`` computes it from a launch's raw ncu metrics (headline columns); timing columns
    have none (their values come from ``timings.json``) and state their source in ``note``.
    ``gate`` False marks columns a threshold rule may not use (the raw bank-conflict counters,
    single profiled durations), ``why_not_gated`` says why.
    """

    name: str
    unit: str
    label: str
    better: str = ""  # "lower", "higher" or "" (no direction)
    formula: Expr | None = None
    note: str = ""
    gate: bool = True
    why_not_gated: str = ""

    @property
    def source(self) -> str:
        """The ncu metric(s) or formula, as the report's "Metric sources" shows it."""
        text = self.formula.text() if self.formula is not None else ""
        return f"{text} ({self.note})" if text and self.note else (text or self.note)

    def needs(self) -> tuple[str, ...]:
        return self.formula.needs() if self.formula is not None else ()


RAW_COUNTER = ("is a raw hardware counter: not zero on conflict-free code and different from run to run; "
               "gate bank conflicts on shared_excessive_wavefronts (derived__memory_l1_wavefronts_shared_excessive) "
               "or shared_wavefronts_per_load / shared_wavefronts_per_store")
SINGLE_LAUNCH = ("comes from a single profiled launch (gpu__time_duration under ncu); gate time on event timings: "
                 "`duration` (event-timed median, timings.json) or event_gbps, e.g. 'duration <= 1.10 * baseline', "
                 "or on ncu's own time of the launch: duration_us")

_LD_WF, _ST_WF = M("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), M(
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
_LD_INST, _ST_INST = M("smsp__sass_inst_executed_op_shared_ld.sum"), M("smsp__sass_inst_executed_op_shared_st.sum")
_DUR = M("gpu__time_duration.sum")
_FFMA_PER_CYCLE = M("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed")
_DRAM_RD, _DRAM_WR = M("dram__bytes_read.sum"), M("dram__bytes_write.sum")
#: Excessive shared wavefronts: ncu's derived metric, else the per-instruction pair it is made of
#: (equal to it on every launch of the committed captures; the l1tex__data_pipe_* total is not).
#: (actual, ideal) raw metric pairs: ncu never counts fewer accesses than the ideal, so a launch
#: whose actual is below its ideal is a corrupt capture (the excess computed from it is negative).
AT_LEAST_IDEAL = (("memory_l1_wavefronts_shared", "memory_l1_wavefronts_shared_ideal"),
                  ("memory_l2_theoretical_sectors_global", "memory_l2_theoretical_sectors_global_ideal"))
#: Raw excess counters ncu derives (actual - ideal): never negative in a real capture.
EXCESS_METRICS = ("derived__memory_l1_wavefronts_shared_excessive",
                  "derived__memory_l2_theoretical_sectors_global_excessive")
EXCESSIVE = FirstOf(M("derived__memory_l1_wavefronts_shared_excessive"),
                    Diff(M("memory_l1_wavefronts_shared"), M("memory_l1_wavefronts_shared_ideal")))


def _efficiency(side: str) -> Expr:
    return Scaled(M(f"smsp__sass_average_data_bytes_per_sector_mem_global_op_{side}.ratio"),
                  100 / SECTOR_BYTES, "/ 32 * 100")


def _per_request(side: str) -> Expr:
    return Ratio(M(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{side}.sum"),
                 M(f"l1tex__t_requests_pipe_lsu_mem_global_op_{side}.sum"))


#: The summary's headline columns, in report order.
HEADLINE: tuple[Column, ...] = (
    Column("duration_us", "us", "duration (ncu, us)", "lower", Scaled(_DUR, 1e-3, "/ 1000"),
           "a single profiled launch: ncu flushes caches before each replay pass"),
    Column("dram_read_bytes", "byte", "DRAM bytes read", formula=_DRAM_RD),
    Column("dram_write_bytes", "byte", "DRAM bytes written", formula=_DRAM_WR),
    Column("dram_throughput_gbps", "GB/s", "DRAM throughput (GB/s)", "higher", Ratio(Sum(_DRAM_RD, _DRAM_WR), _DUR),
           gate=False, why_not_gated=SINGLE_LAUNCH),
    Column("dram_throughput_pct_peak", "%", "DRAM throughput (% of peak)", "higher",
           M("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"), gate=False, why_not_gated=SINGLE_LAUNCH),
    Column("l2_hit_rate_pct", "%", "L2 hit rate (%)", "", M("lts__t_sector_hit_rate.pct")),
    Column("achieved_occupancy_pct", "%", "achieved occupancy (%)", formula=M(
        "sm__warps_active.avg.pct_of_peak_sustained_active")),
    Column("theoretical_occupancy_pct", "%", "theoretical occupancy (%)",
           formula=M("sm__maximum_warps_per_active_cycle_pct")),
    Column("registers_per_thread", "register", "registers per thread", formula=M("launch__registers_per_thread")),
    Column("shared_mem_per_block_bytes", "byte", "shared memory per block (bytes)",
           formula=Sum(M("launch__shared_mem_per_block_static"), M("launch__shared_mem_per_block_dynamic"), True)),
    Column("shared_load_instructions", "inst", "shared load instructions", formula=_LD_INST),
    Column("shared_store_instructions", "inst", "shared store instructions", formula=_ST_INST),
    Column("shared_load_wavefronts", "wavefront", "shared load wavefronts", "lower", _LD_WF),
    Column("shared_store_wavefronts", "wavefront", "shared store wavefronts", "lower", _ST_WF),
    Column("shared_wavefronts_per_load", "wavefront/inst", "shared wavefronts per load", "lower",
           Ratio(_LD_WF, _LD_INST)),
    Column("shared_wavefronts_per_store", "wavefront/inst", "shared wavefronts per store", "lower",
           Ratio(_ST_WF, _ST_INST)),
    Column("shared_ideal_wavefronts", "wavefront", "ideal shared wavefronts",
           formula=M("memory_l1_wavefronts_shared_ideal")),
    Column("shared_excessive_wavefronts", "wavefront", "excessive shared wavefronts (bank conflicts)", "lower",
           EXCESSIVE),
    Column("bank_conflicts_ld_raw", "", "raw bank-conflict counter, loads",
           formula=M("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
           note="raw hardware counter: not zero on conflict-free code; no verdict rests on it", gate=False,
           why_not_gated=RAW_COUNTER),
    Column("bank_conflicts_st_raw", "", "raw bank-conflict counter, stores",
           formula=M("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
           note="raw hardware counter: not zero on conflict-free code; no verdict rests on it", gate=False,
           why_not_gated=RAW_COUNTER),
    Column("global_load_efficiency_pct", "%", "global load efficiency (%)", "higher",
           WhenNonZero(_efficiency("ld"), M("smsp__sass_inst_executed_op_global_ld.sum")),
           "cp.async (LDGSTS) loads are not in this ratio: n/a for a kernel without LDG"),
    Column("global_store_efficiency_pct", "%", "global store efficiency (%)", "higher", _efficiency("st")),
    Column("global_load_sectors_per_request", "sector/request", "global load sectors per request",
           formula=_per_request("ld")),
    Column("global_store_sectors_per_request", "sector/request", "global store sectors per request",
           formula=_per_request("st")),
    Column("l2_excessive_sectors", "sector", "excessive L2 sectors (uncoalesced global)", "lower",
           M("derived__memory_l2_theoretical_sectors_global_excessive")),
    Column("instructions_executed", "inst", "warp instructions executed", "lower", M("smsp__inst_executed.sum")),
    Column("threads_per_instruction", "thread/inst", "active threads per executed instruction", "higher",
           M("smsp__thread_inst_executed_per_inst_executed.ratio"), "32 when no lane of a warp idles"),
    Column("branch_uniformity_pct", "%", "branch uniformity (%)", "higher",
           M("smsp__sass_average_branch_targets_threads_uniform.pct"),
           "share of branch targets taken by all active threads of the warp: 100 without divergence"),
    Column("barrier_stall_per_issue", "warp/issue", "barrier stall (warps per issue)", "lower",
           M("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"),
           "warps waiting at __syncthreads() per issued instruction"),
    Column("dram_read_gbps", "GB/s", "DRAM read throughput (GB/s)", "higher", Ratio(_DRAM_RD, _DUR),
           gate=False, why_not_gated=SINGLE_LAUNCH),
    Column("dram_read_pct_peak", "%", "DRAM read throughput (% of peak)", "higher",
           M("dram__bytes_read.sum.pct_of_peak_sustained_elapsed"), gate=False, why_not_gated=SINGLE_LAUNCH),
    # The compute side (a matrix multiply's story): pipes busy, register reuse, spills.
    Column("fma_pipe_pct", "%", "FMA pipe busy (% of active cycles)", "higher",
           M("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
           "cycles the FMA pipe (FFMA, FMUL, FADD, IMAD) was busy, of the SM's active cycles"),
    Column("fma_inst_pct", "%", "FMA pipe instructions (% of peak issue)", "higher",
           M("sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active")),
    Column("tensor_pipe_pct", "%", "tensor pipe busy (% of active cycles)", "higher",
           M("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")),
    Column("gmma_inst_pct", "%", "warpgroup MMA (wgmma) instructions (% of peak issue)", "higher",
           M("sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active"),
           "0 for mma.sync (HMMA) and CUDA-core kernels: it tells WGMMA from mma.sync"),
    Column("sm_throughput_pct", "%", "SM throughput (% of peak)", "higher",
           M("sm__throughput.avg.pct_of_peak_sustained_elapsed"), gate=False, why_not_gated=SINGLE_LAUNCH),
    Column("global_load_instructions", "inst", "global load instructions", "lower",
           M("smsp__sass_inst_executed_op_global_ld.sum")),
    Column("ffma_per_shared_load", "inst/inst", "FFMA per shared load instruction", "higher",
           Ratio(Scaled(Product(_FFMA_PER_CYCLE, M("smsp__cycles_elapsed.avg")), 1 / 32, "/ 32"), _LD_INST),
           "warp FFMA instructions (thread FFMAs per cycle x cycles / 32) per warp shared load: register reuse"),
    Column("l1_hit_rate_pct", "%", "L1 hit rate (%)", "", M("l1tex__t_sector_hit_rate.pct")),
    Column("local_sectors", "sector", "local-memory sectors (register spills)", "lower",
           Sum(M("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"), M("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")),
           "loads + stores of local memory: 0 without spills or stack arrays"),
)
HEADLINE_BY_NAME = {c.name: c for c in HEADLINE}
#: ncu's own time of a launch: gated as a single profiled launch (every capture has it, with or
#: without timings.json), the gate's results say so.
NCU_DURATION = "duration_us"
#: Columns that rest on one profiled launch's duration: never flagged by diff; the throughputs
#: derived from it (why_not_gated SINGLE_LAUNCH) are never gated, time is gated as duration
#: (event timings) or as :data:`NCU_DURATION`.
SINGLE_LAUNCH_COLUMNS = (NCU_DURATION, *(c.name for c in HEADLINE if c.why_not_gated == SINGLE_LAUNCH))

#: Event-timing columns, filled from timings.json (live runs). The work model (bytes moved per
#: launch) is the case's: 2 * rows * cols * itemsize for the transpose.
TIMING_COLUMNS: tuple[Column, ...] = (
    Column("event_median_us", "us", "event-timed median (us)", "lower",
           note="CUDA events: median of N launches (warm, buffers rotated)"),
    Column("event_p10_us", "us", "event p10 (us)", "lower", note="CUDA events: 10th percentile"),
    Column("event_p90_us", "us", "event p90 (us)", "lower", note="CUDA events: 90th percentile"),
    Column("event_gbps", "GB/s", "event-timed GB/s", "higher",
           note="bytes moved per launch (the case's work model) / event_median_us"),
    Column("event_tflops", "TFLOP/s", "event-timed TFLOP/s", "higher",
           note="floating-point operations per launch (the case's work model, 2 M N K for a matrix multiply) / "
                "event_median_us; NaN where the work model counts none"),
    Column("pct_of_copy_kernel", "%", "% of ceiling kernel", "higher",
           note="event_gbps / GB/s of the case's ceiling kernel"),
    Column("pct_of_memcpy", "%", "% of memcpy", "higher", note="event_gbps / GB/s of cudaMemcpy device-to-device"),
)
TIMING_BY_NAME = {c.name: c for c in TIMING_COLUMNS}

#: Columns of the stage itself, neither a raw metric's nor a timing's: how many kernels its
#: profiled call launched (analysis/launch_groups.py combines a stage of several).
STAGE_COLUMNS: tuple[Column, ...] = (
    Column("launches", "launch", "kernel launches", "lower",
           note="ncu results in the stage's NVTX range: a Python stage's call may launch several kernels, "
                "whose counts, bytes and times the stage's figures sum", gate=False,
           why_not_gated="counts the kernels of one profiled call; gate their time on event timings"),
)
COLUMNS_BY_NAME = {**HEADLINE_BY_NAME, **TIMING_BY_NAME, **{c.name: c for c in STAGE_COLUMNS}}


#: Headline column -> the summary column that says where its value came from ("ncu",
#: "computed" or "not collected"): the columns whose formula is a :class:`FirstOf`.
SOURCE_COLUMN = {"shared_excessive_wavefronts": "shared_excessive_source"}


def headline_row(v: Values) -> dict[str, float | str]:
    """Every headline column of one launch from its raw metric values ``v`` (name -> base-unit
    value), plus ``shared_excessive_source`` ("ncu", "computed" or "not collected")."""
    row: dict[str, float | str] = {c.name: c.formula(v) for c in HEADLINE if c.formula is not None}
    row[SOURCE_COLUMN["shared_excessive_wavefronts"]] = EXCESSIVE.source_of(v)
    return row


# ---------------------------------------------------------------------------------------------
# Raw ncu metrics: which section collects them, where the details page shows them


@dataclass(frozen=True)
class NcuMetric:
    """A raw ncu metric a formula reads: the ``--section`` that collects it, when the details page
    (``--page details``) shows it, its (section, entry) there, and ``unit``: its unit after
    :func:`~profiler_report.capture.units.normalize_unit` (``""`` for a count, whose unit cell
    may also name what it counts; see :func:`unit_fits`)."""

    name: str
    collected_by: str
    details: tuple[str, str] | None = None
    unit: str = ""


#: Units a count may carry in ncu's exports (the raw page writes most counts without one).
COUNT_UNITS = frozenset({"", "inst", "sector", "sectors", "wavefront", "request", "warp", "thread", "block"})


_SOL, _MWA = "GPU Speed Of Light Throughput", "Memory Workload Analysis"
_INST = "--section InstructionStats / MemoryWorkloadAnalysis_Tables"
_CMP = "--section ComputeWorkloadAnalysis (--set full)"
_ROOF = "--section SpeedOfLight_RooflineChart (--set full)"
_FULL_SC, _FULL_MWT = "--section SourceCounters (--set full)", "--section MemoryWorkloadAnalysis_Tables (--set full)"
NCU_METRICS: tuple[NcuMetric, ...] = (
    NcuMetric("gpu__time_duration.sum", "--section SpeedOfLight (in every --set)", (_SOL, "Duration"), "ns"),
    NcuMetric("gpc__cycles_elapsed.max", "--section SpeedOfLight", (_SOL, "Elapsed Cycles"), "cycle"),
    NcuMetric("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "--section SpeedOfLight",
              (_SOL, "DRAM Throughput"), "%"),
    NcuMetric("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "--section SpeedOfLight",
              (_SOL, "Memory Throughput"), "%"),
    NcuMetric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "--section SpeedOfLight",
              (_SOL, "Compute (SM) Throughput"), "%"),
    NcuMetric("dram__bytes.sum.per_second", "--section MemoryWorkloadAnalysis", (_MWA, "Memory Throughput"),
              "byte/s"),
    NcuMetric("dram__bytes_read.sum", "--section MemoryWorkloadAnalysis (--set full)", unit="byte"),
    NcuMetric("dram__bytes_write.sum", "--section MemoryWorkloadAnalysis (--set full)", unit="byte"),
    NcuMetric("lts__t_sector_hit_rate.pct", "--section MemoryWorkloadAnalysis (--set full)", (_MWA, "L2 Hit Rate"),
              "%"),
    NcuMetric("sm__warps_active.avg.pct_of_peak_sustained_active", "--section Occupancy",
              ("Occupancy", "Achieved Occupancy"), "%"),
    NcuMetric("sm__maximum_warps_per_active_cycle_pct", "--section Occupancy", ("Occupancy", "Theoretical Occupancy"),
              "%"),
    NcuMetric("launch__registers_per_thread", "--section LaunchStats", ("Launch Statistics", "Registers Per Thread"),
              "register/thread"),
    NcuMetric("launch__shared_mem_per_block_static", "--section LaunchStats",
              ("Launch Statistics", "Static Shared Memory Per Block"), "byte/block"),
    NcuMetric("launch__shared_mem_per_block_dynamic", "--section LaunchStats",
              ("Launch Statistics", "Dynamic Shared Memory Per Block"), "byte/block"),
    NcuMetric("memory_l1_wavefronts_shared", _FULL_SC),
    NcuMetric("memory_l1_wavefronts_shared_ideal", _FULL_SC),
    NcuMetric("derived__memory_l1_wavefronts_shared_excessive", _FULL_SC),
    NcuMetric("derived__memory_l2_theoretical_sectors_global_excessive", _FULL_SC),
    NcuMetric("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", _FULL_SC, unit="byte/sector"),
    NcuMetric("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", _FULL_SC, unit="byte/sector"),
    NcuMetric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", _FULL_MWT),
    NcuMetric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", _FULL_MWT),
    NcuMetric("smsp__sass_inst_executed_op_shared_ld.sum", _INST),
    NcuMetric("smsp__sass_inst_executed_op_shared_st.sum", _INST),
    NcuMetric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", _FULL_MWT),
    NcuMetric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", _FULL_MWT),
    NcuMetric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", _FULL_MWT),
    NcuMetric("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", _FULL_MWT),
    NcuMetric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", _FULL_MWT),
    NcuMetric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", _FULL_MWT),
    # ncu states this cycles-per-issue ratio in 'inst': a count unit, no scale.
    NcuMetric("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "--section WarpStateStats"),
    NcuMetric("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "--section WarpStateStats"),
    NcuMetric("smsp__inst_executed.sum", "--section InstructionStats"),
    NcuMetric("smsp__thread_inst_executed_per_inst_executed.ratio", "--section InstructionStats"),
    NcuMetric("smsp__sass_average_branch_targets_threads_uniform.pct", "--section SourceCounters (--set full)",
              unit="%"),
    NcuMetric("dram__bytes_read.sum.pct_of_peak_sustained_elapsed", "--section MemoryWorkloadAnalysis (--set full)",
              unit="%"),
    NcuMetric("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", _CMP, unit="%"),
    NcuMetric("sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", _CMP, unit="%"),
    NcuMetric("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", _CMP, unit="%"),
    NcuMetric("sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active", _CMP, unit="%"),
    NcuMetric("smsp__sass_inst_executed_op_global_ld.sum", _INST),
    NcuMetric("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", _ROOF, unit="inst/cycle"),
    NcuMetric("smsp__cycles_elapsed.avg", "--section SpeedOfLight", unit="cycle"),
    NcuMetric("l1tex__t_sector_hit_rate.pct", "--section MemoryWorkloadAnalysis (--set full)", unit="%"),
    NcuMetric("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", _FULL_MWT),
    NcuMetric("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", _FULL_MWT),
)
# The roofline's metrics that no formula above reads already (dram__bytes.sum.per_second is listed once).
NCU_METRICS += tuple(NcuMetric(name, _ROOF, unit=unit) for name, unit in ROOFLINE_METRICS
                     if name not in {m.name for m in NCU_METRICS})
NCU_BY_NAME = {m.name: m for m in NCU_METRICS}
#: ncu metric -> the ncu option that collects it.
COLLECTED_BY = {m.name: m.collected_by for m in NCU_METRICS}
#: (details-page section, entry) -> the ncu metric it shows.
DETAILS_TO_METRIC = {m.details: m.name for m in NCU_METRICS if m.details}


def unit_fits(metric: str, unit: str) -> bool:
    """Whether ``unit`` (normalized, as the readers store it) is the unit the registry expects for
    ``metric``: equal to :attr:`NcuMetric.unit`, or any :data:`COUNT_UNITS` for a count. True for
    metrics the registry does not read."""
    known = NCU_BY_NAME.get(metric)
    if known is None:
        return True
    return unit in COUNT_UNITS if known.unit == "" else unit == known.unit


def expected_unit_text(metric: str) -> str:
    """How a refusal names the unit ``metric`` needs: 'ns (a time unit such as us)', 'a count (no unit)'."""
    unit = NCU_BY_NAME[metric].unit
    return {"": "a count (no unit, or inst/sector/...)", "ns": "a time (us, ns, ms, usecond, ...)",
            "byte": "a size (byte, Kbyte, Mbyte, ...)"}.get(unit, f"{unit} (with any SI prefix)")


def value_problem(metric: str, value: float) -> str:
    """Why ``value`` cannot be a reading of ``metric``, or "" when it can: no value is infinite
    (ncu writes 'n/a' for what it could not measure), and every metric the registry reads is a
    count, a size, a time, a percentage or a ratio of those, so never negative. Other ncu metrics
    may be negative (the real H200 capture holds a negative ``.min.pct_of_peak`` tensor metric)."""
    if math.isinf(value):
        return "is not a finite number"
    if value < 0 and metric in NCU_BY_NAME:
        return "is negative, but it is a count, a size, a time or a ratio of those"
    return ""


def collection_hints(names: tuple[str, ...] | list[str]) -> list[str]:
    """The ncu options that collect ``names`` (raw metrics), sorted, without repeats."""
    return sorted({COLLECTED_BY[n] for n in names if n in COLLECTED_BY})


def required_metrics() -> list[str]:
    """Every raw metric a headline formula reads (the primary of a FirstOf only), plus the stall
    metric the stall chart needs: what "not collected" lists when a capture lacks it."""
    names: list[str] = []
    for c in HEADLINE:
        f = c.formula
        for n in (f.primary.needs() if isinstance(f, FirstOf) else f.needs() if f else ()):
            if n not in names and n in COLLECTED_BY:
                names.append(n)
    names.append("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio")
    return names


# ---------------------------------------------------------------------------------------------
# Stall reasons

STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")


def stall_reasons(values: Values) -> dict[str, float]:
    """reason -> cycles per issued instruction, from every
    ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`` the launch holds."""
    out = {}
    for name, val in values.items():
        m = STALL_RE.match(name)
        if m and not math.isnan(val):
            out[m.group(1)] = float(val)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))
