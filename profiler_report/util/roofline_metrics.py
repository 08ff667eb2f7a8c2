"""The raw ncu metrics the roofline reads (:mod:`profiler_report.analysis.roofline`), with their
units. A plain table with no imports: :mod:`profiler_report.metrics` adds each one its formulas
do not already read to its ``NCU_METRICS``, collected by ``--section SpeedOfLight_RooflineChart``."""

from __future__ import annotations

#: The raw metrics the roofline reads (analysis/roofline.py), with their units: achieved work and
#: traffic, the peaks and the clocks they are per cycle of. ncu's own roofline sections use them.
ROOFLINE_METRICS: tuple[tuple[str, str], ...] = (
    ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed", "inst/cycle"),
    ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed", "inst/cycle"),
    ("derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2", ""),
    ("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed", "inst/cycle"),
    ("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed", "inst/cycle"),
    ("derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2", ""),
    ("smsp__cycles_elapsed.avg.per_second", "hz"),
    ("sm__cycles_elapsed.avg.per_second", "hz"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "inst/cycle"),
    ("dram__bytes.sum.per_second", "byte/s"),
    ("dram__bytes.sum.peak_sustained", "byte/cycle"),
    ("dram__cycles_elapsed.avg.per_second", "hz"),
    ("lts__lts2xbar_cycles_active.sum.per_second", "hz"),
    ("lts__lts2xbar_cycles_active.sum.peak_sustained", ""),
    ("lts__cycles_elapsed.avg.per_second", "hz"),
    ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second", "hz"),
    ("l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained", ""),
    ("l1tex__cycles_elapsed.avg.per_second", "hz"),
    *((f"sm__ops_path_tensor_op_{p}_sparsity_off.sum.{s}", "")
      for p in ("hgmma_src_bf16_dst_fp32", "hgmma_src_fp16", "hgmma_src_tf32_dst_fp32", "hmma_src_bf16_dst_fp32",
                "hmma_src_fp16_dst_fp16", "hmma_src_fp16_dst_fp32", "hmma_src_tf32_dst_fp32")
      for s in ("per_cycle_elapsed", "peak_sustained")),
)
