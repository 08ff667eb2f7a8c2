"""analysis.launch_groups: how a stage of several launches (one NVTX range, several kernels)
becomes one row of figures. The tables here are small hand-made ones (test values); the
recorded softmax capture is judged in tests/test_softmax_fixture.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiler_report.analysis import analyze
from profiler_report.analysis.launch_groups import combine, kernel_shares, stage_values, stage_wide
from profiler_report.capture.model import METRIC_COLUMNS, RULE_COLUMNS, Capture


@pytest.mark.parametrize(("metric", "how"), [
    ("gpu__time_duration.sum", "sum"), ("dram__bytes_read.sum", "sum"), ("gpc__cycles_elapsed.max", "sum"),
    ("derived__memory_l1_wavefronts_shared_excessive", "sum"), ("inst_executed", "sum"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "weighted"), ("lts__t_sector_hit_rate.pct", "weighted"),
    ("dram__bytes.sum.per_second", "weighted"), ("sm__maximum_warps_per_active_cycle_pct", "weighted"),
    ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "weighted"),
    ("launch__registers_per_thread", "longest"), ("device__attribute_max_threads_per_block", "longest"),
])
def test_each_metric_combines_by_what_it_is(metric, how):
    assert combine(metric) == how


WIDE = pd.DataFrame({
    "gpu__time_duration.sum": [1000.0, 3000.0, 2000.0],
    "dram__bytes_read.sum": [4e6, 8e6, 2e6],
    "sm__warps_active.avg.pct_of_peak_sustained_active": [40.0, 80.0, 50.0],
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": [2.0, 6.0, 1.0],
    "smsp__inst_issued.sum": [300.0, 100.0, 50.0],
    "launch__registers_per_thread": [16.0, 32.0, 24.0],
}, index=[0, 1, 2])


def test_sums_weights_and_the_longest_launch():
    v = stage_values(WIDE, [0, 1])
    assert v["gpu__time_duration.sum"] == 4000 and v["dram__bytes_read.sum"] == 12e6
    assert v["sm__warps_active.avg.pct_of_peak_sustained_active"] == pytest.approx((40 * 1 + 80 * 3) / 4)
    assert v["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"] == pytest.approx(
        (2 * 300 + 6 * 100) / 400)  # per issued instruction: weighted by instructions issued
    assert v["launch__registers_per_thread"] == 32  # launch 1 is the longest
    assert stage_values(WIDE, [2]) == WIDE.loc[2].to_dict()  # one launch: its own values exactly


def _capture(kernels: list[tuple[str, str]]) -> Capture:
    """A capture of launches (kernel, NVTX range) holding WIDE's metrics, launch i row i % 3."""
    rows = []
    for lid, (kernel, rng) in enumerate(kernels):
        for metric, value in WIDE.loc[lid % 3].items():
            rows.append({"launch_id": lid, "kernel": kernel, "demangled": kernel, "mangled": "", "nvtx_range": rng,
                         "grid": "(1, 1, 1)", "block": "(128, 1, 1)", "metric": metric, "value": value, "unit": ""})
    return Capture(pd.DataFrame(rows, columns=METRIC_COLUMNS), pd.DataFrame(columns=RULE_COLUMNS), Path("t.ncu-rep"),
                   "ncu-rep")


def test_launches_in_one_own_range_are_one_stage_with_summed_figures():
    cap = _capture([("reduce_kernel", "pr_sm.eager"), ("elementwise_kernel", "pr_sm.eager"),
                    ("softmax_kernel", "pr_sm.row")])
    a = analyze(cap)
    assert list(a.summary["stage"]) == ["eager", "row"] and list(a.summary["launches"]) == [2, 1]
    eager = a.summary.iloc[0]
    assert eager["dram_read_bytes"] == 12e6 and eager["duration_us"] == pytest.approx(4.0)
    assert eager["kernel"] == "reduce_kernel + elementwise_kernel" and eager["launch_id"] == 1
    assert eager["registers_per_thread"] == 32
    shares = kernel_shares(a.stages, cap.wide())
    assert list(shares["share_pct"][:2]) == pytest.approx([25.0, 75.0]) and shares["share_pct"][2] == 100
    assert list(stage_wide(cap.wide(), a.stages).index) == [1, 2]


def test_repeated_kernels_outside_own_ranges_keep_their_numbering():
    cap = _capture([("k", ""), ("k", "")])
    assert list(analyze(cap).summary["stage"]) == ["k", "k#2"]


def test_a_stage_of_several_launches_lists_its_kernels_on_the_page():
    import jinja2

    from profiler_report.report.stage_kernels import stage_kernels
    from profiler_report.util.resources import resource_dir

    cap = _capture([("reduce_kernel", "pr_sm.eager"), ("elementwise_kernel", "pr_sm.eager"),
                    ("softmax_kernel", "pr_sm.row")])
    a = analyze(cap)
    block = stage_kernels(a.kernels, "eager")
    assert block is not None and [r[0] for r in block.rows] == ["reduce_kernel", "elementwise_kernel"]
    assert [r[4] for r in block.rows] == ["25.0%", "75.0%"] and "summed over its launches" in block.note
    assert stage_kernels(a.kernels, "row") is None  # one launch: no list
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(resource_dir("templates"))), autoescape=True)
    html = env.get_template("_stage_kernels.html.j2").render(s={"kernels": block})
    assert "Kernels of this stage (2 launches)" in html
    assert '<code title="elementwise_kernel">elementwise_kernel</code>' in html


def test_a_gate_on_a_raw_metric_reads_the_whole_stage():
    from profiler_report.analysis.run import Run
    from profiler_report.capture.sidecars import Sidecars
    from profiler_report.gate.evaluate import measure
    from profiler_report.gate.rules import Rule

    cap = _capture([("reduce_kernel", "pr_sm.eager"), ("elementwise_kernel", "pr_sm.eager"),
                    ("softmax_kernel", "pr_sm.row")])
    run = Run(cap.path, cap, analyze(cap), Sidecars())
    rule = Rule("dram__bytes_read.sum <= 1", "dram__bytes_read.sum", "raw", "<=", 1.0)
    band, why = measure(run, "eager", rule)
    assert why == "" and band is not None and band.value == 12e6  # both launches, not the longest alone
    assert measure(run, "row", rule)[0].value == 2e6


def test_a_real_capture_with_two_launches_in_one_range_renders_them_as_one_stage(f32_capture, manifest):
    """The transpose's H200 capture, its second launch moved into the first one's NVTX range (a
    test edit of the ranges, not of any measured value): the page's stage sums both."""
    from profiler_report.report.html import render_html
    from profiler_report.report.page import PageInputs, build_page

    metrics = f32_capture.metrics.copy()
    first, second = sorted(metrics["launch_id"].unique())[:2]
    rng = metrics.loc[metrics["launch_id"] == first, "nvtx_range"].iloc[0]
    metrics.loc[metrics["launch_id"] == second, "nvtx_range"] = rng
    cap = Capture(metrics, f32_capture.rules, f32_capture.path, f32_capture.kind, f32_capture.device,
                  f32_capture.report_version, f32_capture.source, f32_capture.source_files)
    a = analyze(cap, manifest)
    stage = a.summary.iloc[0]
    wide = f32_capture.wide()
    assert stage["launches"] == 2 and len(a.summary) == len(f32_capture.launches()) - 1
    assert stage["dram_read_bytes"] == wide.loc[[first, second], "dram__bytes_read.sum"].sum()
    from profiler_report.analysis.story import tell

    html = render_html(build_page(PageInputs(a, {"mode": "recorded capture"}, tell(a, None, capture=cap), None, cap)))
    assert "Kernels of this stage (2 launches)" in html and "summed over its launches" in html
