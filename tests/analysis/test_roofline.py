"""The roofline (analysis/roofline.py, report/roofline.py) on the committed H200 captures: the
reduction's adds counted from the SASS counters, the transpose without floating-point work, the
roofs from the captures' own peaks and clocks."""

from __future__ import annotations

import math

import pytest

from profiler_report.analysis.roofline import COLUMNS, roofline_point
from profiler_report.report.roofline import chart_data, draw, roofline_section
from tests.conftest import DATA, F32, load_run_once

REDUCTION = DATA / "h200_reduction_f32_2p26" / "profile.ncu-rep"


@pytest.fixture(scope="module")
def reduction():
    run = load_run_once(REDUCTION)
    return run.analysis.roofline.set_index("stage"), run.analysis.summary.set_index("stage")


@pytest.fixture(scope="module")
def transpose():
    return load_run_once(F32 / "profile.ncu-rep").analysis.roofline


def test_the_table_has_the_documented_columns(reduction, transpose):
    assert list(transpose.columns) == list(COLUMNS)
    assert list(reduction[0].reset_index().columns) == list(COLUMNS)


def test_counted_adds_match_the_reduction_tree(reduction):
    """Harris's first kernel adds 255 of every 256 elements in its first pass (one tree per block
    of 256): FLOP/s from the counters x the profiled duration gives that count within 0.1 %."""
    roof, summary = reduction
    n = 2**26
    stage = "interleaved_divergent"
    flops = roof.loc[stage, "flops_per_s"] * summary.loc[stage, "duration_us"] * 1e-6
    assert flops == pytest.approx(n * 255 / 256, rel=1e-3)


def test_reduction_stages_sit_on_the_dram_slope_under_their_roofs(reduction):
    roof, _ = reduction
    stages = roof[roof["role"] == "stage"]
    assert (stages["bound"] == "memory").all()
    assert stages["ai_dram"].between(0.24, 0.30).all()  # one add per 4-byte element
    assert (stages["flops_per_s"] <= stages["attainable_flops_per_s"]).all()
    assert roof.loc["vec4", "pct_of_roof"] > 80 > roof.loc["interleaved_divergent", "pct_of_roof"]
    assert roof.loc["read_ceiling", "bound"] == "no work"  # XOR of words: integer work only


def test_transpose_does_no_floating_point_work_and_gets_the_h200_roofs(transpose):
    assert (transpose["flops_per_s"] == 0).all() and (transpose["bound"] == "no work").all()
    assert (transpose["ai_dram"] == 0).all()
    # the roofs at each launch's clock: 132 SMs x 128 FFMA lanes x 2 flops; 1504 B per DRAM cycle
    clock = transpose["sm_clock_hz"]
    assert (transpose["peak_fp32_flops_per_s"] == 132 * 128 * 2 * clock).all()
    assert transpose["peak_dram_bytes_per_s"].between(4.75e12, 4.85e12).all()
    assert transpose["ridge_dram"].between(13, 15).all()
    assert (transpose["peak_l2_bytes_per_s"] > transpose["peak_dram_bytes_per_s"]).all()
    assert (transpose["peak_l1_bytes_per_s"] > transpose["peak_l2_bytes_per_s"]).all()
    assert transpose["peak_tensor_flops_per_s"].isna().all() and (transpose["tensor_path"] == "").all()


def test_missing_metrics_give_nan_never_zero():
    row = roofline_point({})
    assert all(math.isnan(row[c]) for c in ("flops_per_s", "ai_dram", "peak_fp32_flops_per_s", "pct_of_roof"))
    assert row["bound"] == ""


def test_tensor_work_takes_the_tensor_roof_of_its_path():
    ops = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"
    v = {"smsp__cycles_elapsed.avg.per_second": 1.6e9, "sm__cycles_elapsed.avg.per_second": 1.6e9,
         "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": 0.0,
         "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed": 0.0,
         "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2": 100.0,
         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 16896.0,
         f"{ops}.per_cycle_elapsed": 4.0e5, f"{ops}.peak_sustained": 540672.0,
         "dram__bytes.sum.per_second": 1e12, "dram__bytes.sum.peak_sustained": 1504.0,
         "dram__cycles_elapsed.avg.per_second": 3.2e9}
    row = roofline_point(v)
    assert row["tensor_path"] == "hgmma_src_bf16_dst_fp32"
    assert row["peak_flops_per_s"] == row["peak_tensor_flops_per_s"] == 540672.0 * 1.6e9
    assert row["flops_per_s"] == pytest.approx((100 + 4.0e5) * 1.6e9)
    assert row["bound"] == "compute"


def test_chart_places_every_reduction_launch_with_work_and_names_the_others(reduction, transpose):
    roof = reduction[0].reset_index()
    data = chart_data(roof)
    assert len(data.points) == 3 * 10  # ten launches with adds, at DRAM, L2 and L1
    assert [s for s, _ in data.no_work] == ["read_ceiling"]
    assert draw(data).startswith("<svg")
    assert list(data.memory["stage"].unique()) == ["read_ceiling"]  # the one launch without adds


def test_a_ladder_without_floating_point_work_sits_under_its_memory_roofs(transpose):
    data = chart_data(transpose)
    assert data.points.empty and len(data.no_work) == len(transpose)
    # every launch at DRAM, L2 and L1, each under the roof of its level
    assert len(data.memory) == 3 * len(transpose)
    for level, grp in data.memory.groupby("level"):
        assert (grp["bytes_per_s"] <= 1.001 * data.peak_bytes[level]).all()
    svg = draw(data)
    assert svg.startswith("<svg") and "DRAM roof 4.81 TB/s" in svg and "vec_colwalk" in svg
    section = roofline_section(transpose, svg)
    assert section is not None and len(section.rows) == len(transpose)
    assert sum("no floating-point work" in n for n in section.notes) == len(transpose)
    assert any("under the memory roofs" in n for n in section.notes)
