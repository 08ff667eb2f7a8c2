"""render: the HTML report of a real capture, its chart data and its outputs."""

from __future__ import annotations

import json
import re

import pytest

from profiler_report.render import (
    bandwidth_chart_data,
    build_page,
    code_diff_html,
    has_placeholder,
    render_html,
    stall_chart_data,
    write_outputs,
)

STAGES = ["naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk"]
PROV = {"mode": "recorded capture", "gpu": "NVIDIA H200", "clock_control": "none"}


@pytest.fixture(scope="module")
def html(f32_analysis, manifest):
    return render_html(build_page(f32_analysis, PROV, manifest))


def test_every_stage_has_a_section_in_order(html):
    positions = [html.index(f'id="stage-{s}"') for s in STAGES]
    assert positions == sorted(positions)


def test_no_unfilled_placeholder(html):
    assert not has_placeholder(html)
    assert "Undefined" not in html


def test_no_external_request(html):
    # Nothing fetched: no src/href to another host, no CSS import or url() to one.
    assert not re.search(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//', html, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", html, re.I)
    assert "<script" not in html.lower()
    assert "<link" not in html.lower()


def test_recorded_capture_is_labelled(html):
    assert "Recorded capture" in html
    assert "Live run" not in html


def test_environment_and_sources(html):
    assert "NVIDIA H200" in html
    assert "derived__memory_l1_wavefronts_shared_excessive" in html
    assert "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio" in html


def test_stage_sections_show_numbers_and_verdicts(html, f32_analysis):
    assert f32_analysis.verdicts["smem"] in html.replace("&gt;", ">")
    assert "16,252,928" in html  # smem excessive shared wavefronts
    assert "confirmed" in html
    assert html.count("<svg") >= 1 + 2 * len(STAGES)


def test_bandwidth_chart_data_without_timings(f32_analysis):
    data = bandwidth_chart_data(f32_analysis.summary, None)
    assert list(data["label"]) == [*STAGES, "copy"]
    assert list(data["kind"]) == ["stage"] * len(STAGES) + ["ceiling"]
    assert set(data["source"]) == {"ncu DRAM throughput"}
    assert data["gbps"].iloc[: len(STAGES)].is_monotonic_increasing


def test_bandwidth_chart_data_with_timings(f32_analysis):
    from profiler_report.analyze import add_timings

    timings = [{"name": "memcpy", "median_us": 35.0, "p10_us": 34.0, "p90_us": 36.0, "gbps": 3800.0},
               {"name": "naive", "median_us": 280.0, "p10_us": 279.0, "p90_us": 281.0, "gbps": 480.0}]
    summary = add_timings(f32_analysis.summary, timings)
    data = bandwidth_chart_data(summary, timings)
    assert data.iloc[-1].to_dict()["label"] == "memcpy"
    assert data.iloc[0]["gbps"] == 480.0
    assert summary.iloc[0]["pct_of_memcpy"] == pytest.approx(100 * 480 / 3800)


def test_stall_chart_data(f32_analysis):
    data = stall_chart_data(f32_analysis.stalls, "naive", top=3)
    assert len(data) == 3
    assert data.iloc[0]["reason"] == "long_scoreboard"
    assert data["cycles_per_issue"].is_monotonic_decreasing


def test_code_diff_shows_the_one_change(manifest):
    from profiler_report.config import stage_sources

    src = stage_sources(manifest.source_text())
    html = code_diff_html(src["smem"], src["padded"], "smem", "padded")
    assert "TILE + 1" in html
    assert html.count("TILE + 1") == 1


def test_outputs_written(tmp_path, f32_analysis, manifest):
    page = build_page(f32_analysis, PROV, manifest, charts=False)
    files = write_outputs(tmp_path, page, f32_analysis)
    assert [f.name for f in files] == ["index.html", "summary.csv", "summary.json"]
    data = json.loads((tmp_path / "summary.json").read_text())
    assert [s["stage"] for s in data["stages"]] == [*STAGES, "copy"]
    assert data["columns"]["global_store_efficiency_pct"]["unit"] == "%"
    assert not list(tmp_path.glob(".*.tmp"))
