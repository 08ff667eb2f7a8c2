"""analysis.compare: per-stage diff, run identity and comparability, the value formatter."""

from __future__ import annotations

import json
import math

from gate_support import F64_REP, GOOD_REP, REGRESSED_REP, cli

from profiler_report import gate
from profiler_report.analysis.compare import comparability, diff_summaries, run_identity

# ---------------------------------------------------------------------------------------------
# Diff and comparability


def test_diff_of_a_capture_with_itself_shows_no_change(good_run):
    frame = diff_summaries(good_run.summary, good_run.summary)
    assert len(frame) > 50
    assert not frame["flagged"].any()
    assert (frame["change"] == 0).all()


def test_diff_good_vs_regressed_flags_the_conflicts(good_run, regressed_run):
    frame = diff_summaries(good_run.summary, regressed_run.summary)
    flagged = {(r.stage, r.metric) for r in frame[frame["flagged"]].itertuples()}
    assert ("unrolled", "shared_excessive_wavefronts") in flagged
    assert ("unrolled", "shared_wavefronts_per_load") in flagged
    assert ("vec_padded", "(stage)") in flagged
    assert not any(stage in ("naive", "smem", "padded") for stage, _ in flagged)
    dur = frame[(frame["stage"] == "unrolled") & (frame["metric"] == "duration_us")].iloc[0]
    assert dur["change"] > 1 and not dur["flagged"]  # single profiled launch: shown, never flagged
    # Every column resting on one profiled launch's duration, DRAM read throughput too.
    single = frame[frame["metric"].isin(["dram_throughput_gbps", "dram_read_gbps", "dram_read_pct_peak"])]
    assert not single.empty and not single["flagged"].any()


def test_cli_diff(monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, "diff", GOOD_REP, REGRESSED_REP)
    assert code == 0 and err == ""
    assert any(line.startswith("worse") and "shared_excessive_wavefronts " in line and "from 0" in line
               for line in out.splitlines())
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, GOOD_REP, "--format", "json")
    assert code == 0 and not any(r["flagged"] for r in json.loads(out)["rows"])


def test_each_flagged_change_is_better_or_worse_by_the_registry(good_run, regressed_run):
    from profiler_report.metrics import COLUMNS_BY_NAME

    frame = diff_summaries(good_run.summary, regressed_run.summary)
    unrolled = frame[(frame["stage"] == "unrolled") & frame["flagged"]].set_index("metric")
    assert unrolled.loc["shared_excessive_wavefronts", "direction"] == "worse"  # "lower" is better
    assert unrolled.loc["barrier_stall_per_issue", "direction"] == "better"  # fewer warps wait there
    for metric, r in unrolled.iterrows():
        better = COLUMNS_BY_NAME[metric].better
        assert r["direction"] == ("" if not better else "worse" if (r["new"] > r["old"]) == (better == "lower")
                                  else "better"), metric


def test_diff_fails_on_a_regression_and_not_on_itself(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, REGRESSED_REP, "--fail-on", "regression")
    assert code == 1 and "6 worse in a gated metric" in out
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, GOOD_REP, "--fail-on", "regression")
    assert code == 0 and "0 worse" in out
    code, _, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, REGRESSED_REP)  # the default never fails
    assert code == 0
    # Within the tolerance a change is no regression: at 1000 % the wavefronts (+2801 %, and from 0)
    # still are, the 6 % more instructions are not.
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, REGRESSED_REP, "--fail-on", "regression",
                       "--tolerance", "10")
    assert code == 1 and "3 worse in a gated metric" in out


def test_diff_markdown_for_ci(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, REGRESSED_REP, "--format", "markdown",
                       "--fail-on", "regression")
    assert code == 1
    assert out.startswith("### profiler-report diff: 6 regressions\n")
    assert "| **worse** | unrolled | `shared_excessive_wavefronts` |" in out
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, GOOD_REP, "--format", "markdown")
    assert code == 0 and out.startswith("### profiler-report diff: no regression\n")
    assert "No value changed beyond the tolerance." in out


def test_run_identity_from_the_capture(good_run):
    ident = run_identity(good_run.capture, {})
    # The capture holds no ncu version (ncu_report only knows its own), so none is claimed.
    assert ident == {"gpu": "NVIDIA H200", "sm_count": "132", "dtype": "float32"}
    prov = {"gpu": "NVIDIA H200", "ncu_version": "Version 2025.3.1.0 (build 36398880)", "dtype": "float32",
            "rows": 4096}
    assert run_identity(good_run.capture, prov)["ncu_version"] == "2025.3.1"
    assert comparability(ident, run_identity(good_run.capture, prov)) == []
    assert comparability(ident, {**ident, "dtype": "float64"}) == ["dtype: float32 vs float64"]


def test_not_comparable_warns_or_refuses_under_strict(monkeypatch, capsys):
    code, _, err = cli(monkeypatch, capsys, "diff", GOOD_REP, F64_REP)
    assert code == 0 and err.startswith("warning:") and "dtype: float32 vs float64" in err
    code, out, err = cli(monkeypatch, capsys, "diff", GOOD_REP, F64_REP, "--strict")
    assert code == 2 and out == "" and err.count("\n") == 1 and "not comparable" in err
    code, _, err = cli(monkeypatch, capsys, "check", F64_REP, "--baseline", GOOD_REP, "--strict")
    assert code == 2 and "not comparable" in err


def test_render_with_baseline_adds_the_comparison(monkeypatch, capsys, tmp_path):
    code, out, err = cli(monkeypatch, capsys, "render", "--from", REGRESSED_REP, "--out", tmp_path,
                         "--baseline", GOOD_REP)
    assert code == 0, err
    html = (tmp_path / "index.html").read_text()
    assert 'id="comparison"' in html and "excessive shared wavefronts (bank conflicts)" in html
    assert "stage only in old" in html



def test_fmt_value():
    assert gate.fmt_value(math.nan) == "not measured"
    assert gate.fmt_value(16252928.0, "wavefront") == "16,252,928 wavefronts"
    assert gate.fmt_value(1.0, "wavefront") == "1 wavefront"
    assert gate.fmt_value(12.5, "%") == "12.5%"


def test_check_and_diff_share_one_value_formatter():
    from profiler_report.analysis.compare import fmt_value

    assert gate.fmt_value is fmt_value
    assert fmt_value(None) == "not measured" and fmt_value(math.inf, "us") == "inf us"
    assert fmt_value(1234.5, "us") == "1,234.5 us" and fmt_value(0.012345) == "0.0123"
