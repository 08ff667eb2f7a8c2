"""extract: the .ncu-rep reader and the raw-page CSV reader on real H200 captures."""

from __future__ import annotations

import math

import pytest

from profiler_report.analyze import HEADLINE, assign_stages, summarize
from profiler_report.extract import METRIC_COLUMNS, normalize_unit, parse_number, short_kernel_name

STAGES = ["naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk"]
LAUNCHES = [*STAGES, "copy"]  # the tiled copy kernel (the ceiling) is profiled last


def test_ncu_rep_has_one_launch_per_stage_in_order(f32_capture):
    launches = f32_capture.launches()
    assert list(launches["nvtx_range"]) == [f"pr_{s}" for s in LAUNCHES]
    assert list(launches["kernel"]) == [f"transpose_{s}" for s in STAGES] + ["copy_tiled"]
    assert launches.loc[0, "block"] == "(32, 8, 1)"
    assert launches.loc[0, "grid"] == "(128, 128, 1)"


def test_ncu_rep_frame_is_tidy(f32_capture):
    m = f32_capture.metrics
    assert list(m.columns) == METRIC_COLUMNS
    assert not m.duplicated(["launch_id", "metric"]).any()
    assert m["value"].notna().all()
    dur = m[(m["metric"] == "gpu__time_duration.sum")]
    assert set(dur["unit"]) == {"ns"}


def test_device_attributes(f32_capture):
    assert f32_capture.device["gpu"] == "NVIDIA H200"
    assert f32_capture.device["sm_count"] == 132
    assert f32_capture.report_version.startswith("2025.3")


def test_rule_results_are_read(f32_capture):
    rules = f32_capture.rules
    smem = rules[rules["launch_id"] == 1]
    assert "SharedMemoryConflicts" in set(smem["rule"])
    assert not any("@section:" in m for m in rules["message"])


def test_csv_and_ncu_rep_give_the_same_headline_numbers(f32_capture, f32_csv_capture, manifest):
    a = summarize(f32_capture, assign_stages(f32_capture, None, manifest))
    b = summarize(f32_csv_capture, assign_stages(f32_csv_capture, None, manifest))
    assert list(a["stage"]) == list(b["stage"]) == LAUNCHES
    assert list(a["role"]) == ["stage"] * len(STAGES) + ["ceiling"]
    for col in (c.name for c in HEADLINE):
        for x, y in zip(a[col], b[col], strict=True):
            if math.isnan(x):
                assert math.isnan(y), col
            else:
                # the CSV prints some ratios with 2-4 significant digits
                assert y == pytest.approx(x, rel=2e-3, abs=1e-2), col


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (274.24, "us", (274240.0, "ns")),
        (1.5, "msecond", (1.5e6, "ns")),
        (2.0, "Mbyte", (2e6, "byte")),
        (0.5, "Tbyte/s", (5e11, "byte/s")),
        (21.2, "sector/ns", (21.2e9, "sector/s")),
        (2.614, "%/Kbyte", (0.002614, "%/byte")),
        (87.5, "%", (87.5, "%")),
        (16.0, "register/thread", (16.0, "register/thread")),
        (3.0, "", (3.0, "")),
    ],
)
def test_normalize_unit(value, unit, expected):
    v, u = normalize_unit(value, unit)
    assert u == expected[1]
    assert v == pytest.approx(expected[0])


def test_parse_number():
    assert parse_number("16,252,928") == 16252928
    assert parse_number("0.5") == 0.5
    for missing in ("", "n/a", "no data", "nan", "N/A"):
        assert math.isnan(parse_number(missing))
    with pytest.raises(ValueError):
        parse_number("transpose")


def test_short_kernel_name():
    assert short_kernel_name("void transpose_naive<float>(const T1 *, T1 *, int, int)") == "transpose_naive"
    assert short_kernel_name("ns::k(int, float)") == "ns::k"
