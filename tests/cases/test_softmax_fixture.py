"""The recorded live report of the Python ladder examples/softmax (reports/h200-softmax/, written
by scripts/record_softmax.sh on an H200; its capture kept as ncu's zstd-compressed
profile.ncu-repz): its stages, each stage's kernels and summed figures, the DRAM bytes the ladder
is about, and the verdicts; the bfloat16 report beside it. Every figure checked here is
recomputed from the capture's own per-launch values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiler_report.analysis.run import load_run
from profiler_report.model.registry import get_case

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "reports" / "h200-softmax"
CAPTURE = FIXTURE / "profile.ncu-repz"
BF16 = ROOT / "reports" / "h200-softmax-bf16" / "profile.ncu-repz"
LADDER = ["eager", "compiled", "triton_row", "triton_tuned"]


@pytest.fixture(scope="module", params=[CAPTURE, BF16], ids=["float32", "bfloat16"])
def run(request):
    return load_run(request.param, case=get_case(str(ROOT / "examples" / "softmax")))


def _matrix_bytes(run) -> float:
    prov = run.provenance
    return prov["profile_rows"] * prov["profile_cols"] * {"float32": 4, "bfloat16": 2}[prov["dtype"]]


def _row(run, stage):
    s = run.summary
    return s[s["stage"] == stage].iloc[0]


def test_the_stages_are_the_ladders_and_every_one_was_correct(run):
    stages = [s for s in run.stages() if s != "copy"]
    assert stages == [s for s in LADDER if s in stages] and "eager" in stages
    assert _row(run, "copy")["role"] == "ceiling"
    assert all(v["correct"] for v in run.sidecars.validation)


def test_the_eager_stage_is_its_five_kernels_with_their_shares(run):
    assert _row(run, "eager")["launches"] == 5  # amax, sub, exp, sum, div
    shares = run.analysis.kernels[run.analysis.kernels["stage"] == "eager"]
    assert len(shares) == 5 and shares["share_pct"].sum() == pytest.approx(100)
    assert all(_row(run, s)["launches"] == 1 for s in ("triton_row", "triton_tuned", "copy") if s in run.stages())


def test_each_stages_figures_are_the_sums_over_its_launches(run):
    wide, stages = run.capture.wide(), run.analysis.stages
    for stage in run.stages():
        ids = list(stages.loc[stages["stage"] == stage, "launch_id"])
        row = _row(run, stage)
        assert row["duration_us"] == pytest.approx(wide.loc[ids, "gpu__time_duration.sum"].sum() / 1e3)
        assert row["dram_read_bytes"] == pytest.approx(wide.loc[ids, "dram__bytes_read.sum"].sum())
        assert row["dram_write_bytes"] == pytest.approx(wide.loc[ids, "dram__bytes_write.sum"].sum())
        longest = wide.loc[ids, "gpu__time_duration.sum"].idxmax()
        assert row["launch_id"] == longest
        assert row["registers_per_thread"] == wide.loc[longest, "launch__registers_per_thread"]


def test_dram_bytes_fall_toward_one_read_and_one_write(run):
    m = _matrix_bytes(run)
    l2 = float(run.capture.device.get("l2_bytes") or 0)  # dirty lines still in L2 at a kernel's end: not yet written
    # ncu flushes the caches before each replay pass: every kernel of the eager stage reads from DRAM.
    assert _row(run, "eager")["dram_read_bytes"] > 3.5 * m  # five passes over the matrix and its intermediates
    for stage in [s for s in ("triton_row", "triton_tuned", "copy") if s in run.stages()]:
        assert 0.95 * m < _row(run, stage)["dram_read_bytes"] < 1.15 * m
        assert m - l2 < _row(run, stage)["dram_write_bytes"] < 1.15 * m


def test_the_expected_effects_are_judged(run):
    exp = run.analysis.expectations
    assert set(exp["verdict"]) <= {"confirmed", "refuted", "no effect", "not measured"} and not exp.empty
    judged = exp[(exp["stage"] == "triton_row") & (exp["metric"] == "dram_read_bytes")]
    if list(judged["previous"]) == ["eager"]:  # five passes over the matrix -> one
        assert list(judged["verdict"]) == ["confirmed"]
    if "compiled" in run.stages():
        launches = exp[(exp["stage"] == "compiled") & (exp["metric"] == "launches")]
        assert list(launches["verdict"]) == ["confirmed"]
    assert set(run.analysis.verdicts) == {s for s in run.stages() if s != "copy"}


def test_the_summary_json_states_how_a_stage_of_several_launches_combines(run):
    from profiler_report.analysis.summary import summary_json

    doc = json.loads(summary_json(run.analysis))
    assert "summed over its launches" in doc["columns"]["launches"]["source"]
    assert [s["launches"] for s in doc["stages"] if s["stage"] == "eager"] == [5]


def test_the_best_stage_leads_the_peers_at_the_copy_ceiling(run):
    """The bars of the worked example, from the run's own timings: the best stage at >= 95 % of the
    device-to-device copy, ahead of torch.softmax (a peer) and torch.compile (a stage), all timed
    in the one bench process of bench.json."""
    bench = json.loads((run.capture.path.parent / "bench.json").read_text())
    rows = {r["name"]: r for r in bench["rows"]}
    best = min(("triton_row", "triton_tuned"), key=lambda s: rows[s]["median_us"])
    assert rows[best]["pct_of_memcpy"] >= 95
    assert rows[best]["median_us"] < rows["torch_softmax"]["median_us"]
    assert rows[best]["median_us"] < rows["compiled"]["median_us"]


def test_the_example_passes_its_own_gate(run):
    from profiler_report.gate import check_run, load_thresholds

    case = get_case(str(ROOT / "examples" / "softmax"))
    results = check_run(load_thresholds(case.thresholds()), run)
    assert len(results) == 6 and all(r.verdict == "pass" for r in results), [(r.rule, r.verdict) for r in results]
