"""The roofline of every launch: achieved FLOP/s against arithmetic intensity at DRAM, L2 and
L1, under the roofs of the same capture, at that kernel's own clocks.

The formulas are the ones Nsight Compute's roofline sections use (SpeedOfLight_RooflineChart and
SpeedOfLight_HierarchicalTensorRooflineChart), from the metrics of
:data:`~profiler_report.metrics.ROOFLINE_METRICS`, all in ``--set full``:

- FP32 work = (FADD + FMUL + 2 FFMA thread instructions per cycle) x SM cycles per second:
  ``(smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed +
  ..._fmul_... + derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2) x
  smsp__cycles_elapsed.avg.per_second``; FP64 likewise (DADD, DMUL, DFMA).
- Tensor work = the sum over the float tensor paths of
  ``sm__ops_path_tensor_op_<path>_sparsity_off.sum.per_cycle_elapsed x sm__cycles_elapsed.avg.per_second``
  (HGMMA for wgmma, HMMA for mma.sync).
- Traffic: DRAM ``dram__bytes.sum.per_second``; L2 ``lts__lts2xbar_cycles_active.sum.per_second
  x 32`` bytes; L1 ``l1tex__lsu_writeback_active_mem_lgds.sum.per_second x 128`` bytes (CC >= 9.0).
- Roofs: FP32 ``sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained x 2 x`` the SM
  clock; tensor: the ``.sum.peak_sustained`` of the path that did the most work x the SM clock;
  each level's traffic peak ``.peak_sustained`` x its bytes x its own clock.

A clock is read per launch, so a tensor-core kernel that ran at 1.6 GHz under ncu gets a lower
roof than an FP32 kernel at 1.98 GHz: the roof is that kernel's, never a datasheet constant.
"""

from __future__ import annotations

import math

import pandas as pd

from profiler_report.capture.model import Capture

#: Float tensor-core paths summed into the tensor work, and whose peak is the tensor roof.
TENSOR_PATHS = ("hgmma_src_bf16_dst_fp32", "hgmma_src_fp16", "hgmma_src_tf32_dst_fp32", "hmma_src_bf16_dst_fp32",
                "hmma_src_fp16_dst_fp16", "hmma_src_fp16_dst_fp32", "hmma_src_tf32_dst_fp32")
#: Bytes one active cycle of the L2-to-crossbar and L1 write-back counters moves (ncu's constants).
L2_BYTES_PER_CYCLE, L1_BYTES_PER_CYCLE = 32.0, 128.0
LEVELS = ("dram", "l2", "l1")

#: The columns of :func:`roofline_table`: name -> (unit, meaning).
COLUMNS: dict[str, tuple[str, str]] = {
    "stage": ("", "the launch's stage label"),
    "role": ("", '"stage" or "ceiling"'),
    "sm_clock_hz": ("Hz", "smsp__cycles_elapsed.avg.per_second: the SM clock of this launch"),
    "fp32_flops_per_s": ("FLOP/s", "(FADD + FMUL + 2 FFMA) per cycle x the SM clock"),
    "fp64_flops_per_s": ("FLOP/s", "(DADD + DMUL + 2 DFMA) per cycle x the SM clock"),
    "tensor_flops_per_s": ("FLOP/s", "tensor-core operations of every float path per cycle x sm__cycles_elapsed"),
    "flops_per_s": ("FLOP/s", "achieved work: FP32 + FP64 + tensor"),
    "tensor_path": ("", "the tensor path that did the most work ('' when none did)"),
    "dram_bytes_per_s": ("byte/s", "dram__bytes.sum.per_second"),
    "l2_bytes_per_s": ("byte/s", "lts__lts2xbar_cycles_active.sum.per_second x 32"),
    "l1_bytes_per_s": ("byte/s", "l1tex__lsu_writeback_active_mem_lgds.sum.per_second x 128"),
    "ai_dram": ("FLOP/byte", "arithmetic intensity at DRAM: flops_per_s / dram_bytes_per_s"),
    "ai_l2": ("FLOP/byte", "arithmetic intensity at L2"),
    "ai_l1": ("FLOP/byte", "arithmetic intensity at L1"),
    "peak_fp32_flops_per_s": ("FLOP/s", "FFMA peak_sustained x 2 x the SM clock"),
    "peak_tensor_flops_per_s": ("FLOP/s", "peak_sustained of tensor_path x the SM clock (NaN without tensor work)"),
    "peak_flops_per_s": ("FLOP/s", "the compute roof that applies: the tensor peak when tensor work dominates, "
                                   "else FP32"),
    "peak_dram_bytes_per_s": ("byte/s", "dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second"),
    "peak_l2_bytes_per_s": ("byte/s", "lts__lts2xbar_cycles_active.sum.peak_sustained x 32 x lts__cycles_elapsed"),
    "peak_l1_bytes_per_s": ("byte/s", "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained x 128 x l1tex clock"),
    "ridge_dram": ("FLOP/byte", "peak_flops_per_s / peak_dram_bytes_per_s: left of it a launch is DRAM-bound"),
    "attainable_flops_per_s": ("FLOP/s", "min(peak_flops_per_s, ai_dram x peak_dram_bytes_per_s): the roof above it"),
    "pct_of_roof": ("%", "flops_per_s / attainable_flops_per_s"),
    "bound": ("", '"memory" left of the DRAM ridge, "compute" right of it, "no work" without floating-point work'),
}


def _get(v: dict[str, float], name: str) -> float:
    x = v.get(name, math.nan)
    return float(x) if x is not None else math.nan


def _div(a: float, b: float) -> float:
    return a / b if b and not (math.isnan(a) or math.isnan(b)) else math.nan


def _work(v: dict[str, float]) -> dict[str, float | str]:
    """Achieved work and the compute roofs of one launch's metric values ``v``."""
    smsp_hz, sm_hz = _get(v, "smsp__cycles_elapsed.avg.per_second"), _get(v, "sm__cycles_elapsed.avg.per_second")
    sass = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
    fp32 = (_get(v, sass.format("fadd")) + _get(v, sass.format("fmul"))
            + _get(v, "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2")) * smsp_hz
    fp64 = (_get(v, sass.format("dadd")) + _get(v, sass.format("dmul"))
            + _get(v, "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2")) * smsp_hz
    paths = {p: _get(v, f"sm__ops_path_tensor_op_{p}_sparsity_off.sum.per_cycle_elapsed") for p in TENSOR_PATHS}
    done = {p: x for p, x in paths.items() if not math.isnan(x)}
    tensor = sum(done.values()) * sm_hz if done else math.nan
    top = max(done, key=lambda p: done[p]) if done and max(done.values()) > 0 else ""
    peak_tensor = _get(v, f"sm__ops_path_tensor_op_{top}_sparsity_off.sum.peak_sustained") * sm_hz if top else math.nan
    peak_fp32 = _get(v, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained") * 2 * smsp_hz
    total = sum(x for x in (fp32, fp64, tensor) if not math.isnan(x)) if not math.isnan(fp32) else math.nan
    tensor_dominates = bool(top) and tensor > fp32 + (0 if math.isnan(fp64) else fp64)
    return {"sm_clock_hz": smsp_hz, "fp32_flops_per_s": fp32, "fp64_flops_per_s": fp64, "tensor_flops_per_s": tensor,
            "flops_per_s": total, "tensor_path": top, "peak_fp32_flops_per_s": peak_fp32,
            "peak_tensor_flops_per_s": peak_tensor, "peak_flops_per_s": peak_tensor if tensor_dominates else peak_fp32}


def _traffic(v: dict[str, float]) -> dict[str, float]:
    """Achieved and peak bytes per second at DRAM, L2 and L1 of one launch."""
    return {
        "dram_bytes_per_s": _get(v, "dram__bytes.sum.per_second"),
        "l2_bytes_per_s": _get(v, "lts__lts2xbar_cycles_active.sum.per_second") * L2_BYTES_PER_CYCLE,
        "l1_bytes_per_s": _get(v, "l1tex__lsu_writeback_active_mem_lgds.sum.per_second") * L1_BYTES_PER_CYCLE,
        "peak_dram_bytes_per_s": _get(v, "dram__bytes.sum.peak_sustained")
        * _get(v, "dram__cycles_elapsed.avg.per_second"),
        "peak_l2_bytes_per_s": _get(v, "lts__lts2xbar_cycles_active.sum.peak_sustained") * L2_BYTES_PER_CYCLE
        * _get(v, "lts__cycles_elapsed.avg.per_second"),
        "peak_l1_bytes_per_s": _get(v, "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained") * L1_BYTES_PER_CYCLE
        * _get(v, "l1tex__cycles_elapsed.avg.per_second"),
    }


def roofline_point(v: dict[str, float]) -> dict[str, float | str]:
    """Every column of :data:`COLUMNS` but stage and role, from one launch's raw metric values
    (name -> base-unit value). A metric the capture lacks gives NaN, never 0."""
    row: dict[str, float | str] = {**_work(v), **_traffic(v)}
    flops = float(row["flops_per_s"])
    for level in LEVELS:
        row[f"ai_{level}"] = _div(flops, float(row[f"{level}_bytes_per_s"]))
    peak, peak_dram = float(row["peak_flops_per_s"]), float(row["peak_dram_bytes_per_s"])
    row["ridge_dram"] = _div(peak, peak_dram)
    ai = float(row["ai_dram"])
    row["attainable_flops_per_s"] = min(peak, ai * peak_dram) if not (math.isnan(ai) or math.isnan(peak)) else math.nan
    row["pct_of_roof"] = 100 * _div(flops, float(row["attainable_flops_per_s"]))
    ridge = float(row["ridge_dram"])
    row["bound"] = ("no work" if flops == 0 else "" if math.isnan(ai) or math.isnan(ridge)
                    else "memory" if ai < ridge else "compute")
    return row


def roofline_table(capture: Capture, summary: pd.DataFrame) -> pd.DataFrame:
    """One row per launch of ``summary`` (its stage, role and launch_id columns), in its order,
    with the columns of :data:`COLUMNS` (units there: FLOP/s, byte/s, FLOP/byte, %). Values come
    from the capture's own metrics at each launch's own clocks; a capture without the roofline
    metrics (not ``--set full``) gives NaN rows, which the chart leaves out."""
    wide = capture.wide()
    rows = []
    for r in summary[["stage", "role", "launch_id"]].to_dict("records"):
        lid = r["launch_id"]
        values = {str(k): float(v) for k, v in wide.loc[lid].dropna().items()} if lid in wide.index else {}
        rows.append({"stage": r["stage"], "role": r["role"], **roofline_point(values)})
    return pd.DataFrame(rows, columns=list(COLUMNS))
