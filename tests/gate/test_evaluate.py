"""gate.evaluate: the default and ad-hoc thresholds on the real H200 captures."""

from __future__ import annotations

import json

from gate_support import GOOD_REP, by, refused

from profiler_report import gate
from profiler_report.analysis.run import load_run
from profiler_report.gate.grammar import parse_thresholds

# ---------------------------------------------------------------------------------------------
# The gate on the real captures


def test_good_capture_passes_every_count_rule(good_run, default_thresholds):
    results = gate.check_run(default_thresholds, good_run)
    # The fixture was recorded before the vec_tuned, vec_peeled and vec_realigned stages existed:
    # their optional rules are skipped.
    later = {"vec_tuned", "vec_peeled", "vec_realigned"}
    assert {r.stage for r in results if r.verdict == "skipped"} == later
    counted = [r for r in results if r.metric != "event_median_us" and r.stage not in later]
    assert counted and all(r.verdict == "pass" for r in counted), [r.message for r in counted if r.verdict != "pass"]
    timed = [r for r in results if r.metric == "event_median_us" and r.stage not in later]
    # The committed fixtures have no timings.json: time is "not measured", never a pass.
    assert len(timed) == 6 and all(r.verdict == "not measured" for r in timed)
    assert "timings.json" in timed[0].message
    assert gate.exit_code(results, "warn") == 0
    assert gate.exit_code(results, "fail") == 1


def test_regressed_capture_fails_the_conflict_rule(regressed_run, default_thresholds):
    results = gate.check_run(default_thresholds, regressed_run)
    failed = [r for r in results if r.verdict == "fail"]
    assert [(r.stage, r.rule) for r in failed] == [("unrolled", "shared_excessive_wavefronts == 0")]
    assert failed[0].measured == 16252928
    skipped = {r.stage for r in results if r.verdict == "skipped"}
    assert skipped == {"vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk", "vec_tuned", "vec_peeled",
                       "vec_realigned"}
    assert gate.exit_code(results, "warn") == 1


def test_raw_metrics_kernel_regex_previous_and_units(good_run):
    t = parse_thresholds("""
[kernel."^transpose_(smem|padded|unrolled|vec_\\\\w+)$"]
rules = [
  "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum == 2097152 sector",
  "global_store_sectors_per_request <= previous",
  { rule = "dram__bytes_write.sum <= 64", unit = "MB" },
]
[stage.naive]
rules = ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum > 16e6 sector"]
""")
    results = gate.check_run(t, good_run)
    assert {r.stage for r in results} == {"naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled",
                                          "vec_deep", "vec_colwalk"}
    bad = [(r.stage, r.rule, r.message) for r in results if r.verdict != "pass"]
    # vec stages store 16 bytes per thread: 16 sectors per request instead of 4 -> more than the previous stage.
    assert [(s, rule) for s, rule, _ in bad] == [("vec_padded", "global_store_sectors_per_request <= previous")]
    assert by(results, "smem", "dram__bytes_write.sum <= 64 MB").limit == 64e6


def test_raw_metric_absent_from_the_capture_is_not_measured(good_run):
    # Like no name the H200 capture holds: a counter of another architecture or ncu version.
    t = parse_thresholds('[stage.padded]\nrules = ["tpc__future_counter_of_another_chip.sum == 0"]')
    (r,) = gate.check_run(t, good_run)
    assert r.verdict == "not measured" and "does not hold it" in r.message


def test_a_typo_in_a_raw_metric_name_is_bad_input_with_the_closest_names(good_run):
    # One letter added to l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum, which the capture holds:
    # "not measured" would pass silently under --missing warn.
    t = parse_thresholds('[stage.padded]\nrules = ["l1tex__t_sectors_pipe_lsu_mem_global_op_sts.sum == 0"]')
    with refused(r"op_sts\.sum is not in .*did you mean l1tex__t_sectors_pipe_lsu_mem_global_op_st\.sum\?"):
        gate.check_run(t, good_run)


def test_raw_metric_with_a_wrong_unit_is_bad_input(good_run):
    t = parse_thresholds('[stage.padded]\nrules = ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum == 5 %"]')
    with refused("which is in sector"):
        gate.check_run(t, good_run)


def test_stage_not_in_capture(regressed_run):
    t = parse_thresholds('[stage.vec_swizzled]\nrules = ["shared_excessive_wavefronts == 0"]')
    with refused("'vec_swizzled' is not in .*optional = true"):
        gate.check_run(t, regressed_run)
    t = parse_thresholds('[stage.padd]\nrules = ["shared_excessive_wavefronts == 0"]')
    with refused("did you mean padded"):
        gate.check_run(t, regressed_run)
    t = parse_thresholds('[kernel."nope"]\nrules = ["shared_excessive_wavefronts == 0"]')
    with refused("a kernel matching 'nope' is not in"):
        gate.check_run(t, regressed_run)


def test_baseline_rules(good_run, regressed_run):
    t = parse_thresholds('[stage.unrolled]\nrules = ["shared_excessive_wavefronts <= baseline", '
                         '"duration <= 1.10 * baseline"]')
    results = gate.check_run(t, regressed_run, baseline=good_run)
    assert by(results, "unrolled", "shared_excessive_wavefronts <= baseline").verdict == "fail"
    assert by(results, "unrolled", "duration <= 1.10 * baseline").verdict == "not measured"
    assert {r.verdict for r in gate.check_run(t, regressed_run)} == {"skipped"}
    assert {r.verdict for r in gate.check_run(t, good_run, baseline=good_run)} == {"pass", "not measured"}


def test_time_rules_read_timings_json(tmp_path):
    # Synthetic timings beside a link to the real capture: tests the plumbing, not the GPU.
    (tmp_path / "profile.ncu-rep").symlink_to(GOOD_REP)
    timings = [{"name": n, "median_us": m, "p10_us": m * 0.98, "p90_us": m * 1.02, "gbps": 134.2 / m * 1000,
                "repeats": 30} for n, m in (("naive", 290.0), ("smem", 101.0), ("padded", 55.0), ("unrolled", 60.0))]
    (tmp_path / "timings.json").write_text(json.dumps({"timings": timings}))
    run = load_run(tmp_path / "profile.ncu-rep")
    t = parse_thresholds('[stage.smem]\nrules = ["duration < previous"]\n'
                         '[stage.padded]\nrules = ["duration < previous", "event_gbps >= 2 * previous"]\n'
                         '[stage.unrolled]\nrules = ["duration < previous"]\n'
                         '[stage.vec_padded]\nrules = ["duration < previous"]\n')
    results = gate.check_run(t, run)
    assert by(results, "smem", "duration < previous").verdict == "pass"
    assert by(results, "padded", "event_gbps >= 2 * previous").verdict == "fail"  # 101/55 = 1.84x
    slower = by(results, "unrolled", "duration < previous")
    assert slower.verdict == "fail" and slower.measured == 60 and slower.limit == 55
    assert by(results, "vec_padded", "duration < previous").verdict == "not measured"




def test_a_column_with_no_value_for_a_stage_says_why_not_that_metrics_are_missing():
    # The committed H200 live capture: vec_realigned loads only by cp.async, so ncu's load
    # efficiency ratio has no LDG to measure; both of its inputs are in the capture.
    from pathlib import Path

    from conftest import load_run_once

    live = load_run_once(Path(__file__).resolve().parents[2] / "reports" / "h200" / "profile.ncu-rep")
    t = parse_thresholds('[stage.vec_realigned]\nrules = ["global_load_efficiency_pct == 100 %"]')
    (r,) = gate.check_run(t, live)
    assert r.verdict == "not measured"
    assert "is n/a on vec_realigned" in r.message and "without LDG" in r.message and "lacks" not in r.message


def test_a_stage_that_validation_marks_wrong_fails_the_gate_whatever_its_counters(tmp_path, default_thresholds):
    # The real capture with a validation.json beside it (written here) that marks smem's output wrong.
    (tmp_path / "profile.ncu-rep").symlink_to(GOOD_REP)
    entries = [{"stage": s, "dtype": "float32", "correct": s != "smem", "rows": 4096, "cols": 4096,
                "message": "3 of 16777216 elements differ, first at (0, 1)" if s == "smem" else ""}
               for s in ("naive", "smem")]
    (tmp_path / "validation.json").write_text(json.dumps(entries))
    results = gate.check_run(default_thresholds, load_run(tmp_path / "profile.ncu-rep"))
    wrong = [r for r in results if r.metric == "validation"]
    assert [(r.stage, r.verdict) for r in wrong] == [("smem", "fail")]
    assert "3 of 16777216 elements differ" in wrong[0].message
    # Its counter rules pass on their own: the validation result is what fails the run.
    counted = [r for r in results if r.stage == "smem" and r.metric not in ("validation", "event_median_us")]
    assert counted and all(r.verdict == "pass" for r in counted)
    assert gate.exit_code(results, "warn") == 1
    assert gate.validation_failures(load_run(GOOD_REP)) == []  # no validation.json: nothing added
