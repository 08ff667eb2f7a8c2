"""check: thresholds grammar, the gate on the real H200 captures, JUnit/JSON output, diff, comparability."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiler_report import gate
from profiler_report.analysis.compare import comparability, diff_summaries, run_identity
from profiler_report.analysis.run import load_run
from profiler_report.cli import entry
from profiler_report.errors import ProfilerReportError, ThresholdsError
from profiler_report.gate.grammar import parse_rule, parse_thresholds, parse_thresholds_data
from profiler_report.gate.rules import Band

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
BAD = DATA / "thresholds"
GOOD_REP = DATA / "h200_f32_4096" / "profile.ncu-rep"
REGRESSED_REP = DATA / "h200_f32_4096_regressed" / "profile.ncu-rep"
F64_REP = DATA / "h200_f64_2048" / "profile.ncu-rep"


@pytest.fixture(scope="module")
def good_run():
    return load_run(GOOD_REP)


@pytest.fixture(scope="module")
def regressed_run():
    return load_run(REGRESSED_REP)


@pytest.fixture(scope="module")
def default_thresholds():
    return gate.load_thresholds(REPO / "thresholds.toml")


def cli(monkeypatch, capsys, *args, cwd: Path = REPO) -> tuple[int, str, str]:
    """Run the console entry in-process: (exit code, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["profiler-report", *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        entry()
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@contextlib.contextmanager
def refused(fragment: str):
    """Expect a ThresholdsError whose one-line form (message and fix) matches ``fragment``."""
    with pytest.raises(ThresholdsError) as exc:
        yield
    line = exc.value.one_line()
    assert re.search(fragment, line), line
    assert "\n" not in line


def by(results, stage, rule):
    hits = [r for r in results if r.stage == stage and r.rule == rule]
    assert len(hits) == 1, (stage, rule, [(r.stage, r.rule) for r in results])
    return hits[0]


# ---------------------------------------------------------------------------------------------
# Grammar


def test_rule_forms():
    r = parse_rule("shared_excessive_wavefronts   ==  0", "t")
    assert (r.metric, r.kind, r.op, r.value, r.ref) == ("shared_excessive_wavefronts", "headline", "==", 0, None)
    assert r.text == "shared_excessive_wavefronts == 0"
    r = parse_rule("duration <= 1.10 * baseline", "t")
    assert (r.metric, r.kind, r.op, r.ref, r.factor) == ("event_median_us", "timing", "<=", "baseline", 1.10)
    assert parse_rule("duration <= baseline * 1.1", "t").factor == 1.1
    r = parse_rule("duration < previous", "t")
    assert (r.ref, r.factor) == ("previous", 1.0)
    r = parse_rule("global_store_efficiency_pct <= 25 %", "t")
    assert (r.value, r.stated_unit) == (25, "%")
    r = parse_rule("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum == 2097152", "t")
    assert r.kind == "raw"


def test_units_convert_to_the_metric_unit():
    assert parse_rule("duration <= 0.04 ms", "t").limit_in("us") == pytest.approx(40)
    assert parse_rule("duration <= 40000 ns", "t").limit_in("us") == pytest.approx(40)
    assert parse_rule("event_gbps >= 3 TB/s", "t").limit_in("GB/s") == pytest.approx(3000)
    assert parse_rule("shared_mem_per_block_bytes <= 8 KB", "t").limit_in("byte") == 8000
    table = parse_thresholds('[stage.naive]\nrules = [{ rule = "global_store_efficiency_pct <= 25", unit = "%" }]')
    assert table.rules[0].stated_unit == "%"


@pytest.mark.parametrize("text, fragment", [
    ("global_store_efficiency_pct <= 25 us", "unit 'us' does not match global_store_efficiency_pct, which is in %"),
    ("shared_excessive_wavefronts == 0 %", "which is in wavefront"),
    ("duration <= 40 %", "which is in us"),
])
def test_wrong_unit_is_refused(text, fragment):
    with refused(fragment):
        parse_rule(text, "t")


@pytest.mark.parametrize("old, new", [
    ("gld_efficiency", "global_load_efficiency_pct"),
    ("gst_efficiency", "global_store_efficiency_pct"),
    ("shared_ld_bank_conflict", "shared_excessive_wavefronts"),
    ("shared_st_bank_conflict", "shared_excessive_wavefronts"),
    ("shared_load_transactions_per_request", "shared_wavefronts_per_load"),
    ("gld_transactions_per_request", "global_load_sectors_per_request"),
    ("gst_transactions_per_request", "global_store_sectors_per_request"),
])
def test_nvprof_names_point_to_their_ncu_replacement(old, new):
    with pytest.raises(ThresholdsError) as exc:
        parse_rule(f"{old} <= 25", "t")
    line = exc.value.one_line()
    assert "nvprof" in line and new in line and "\n" not in line


def test_gst_efficiency_names_the_ncu_source():
    with pytest.raises(ThresholdsError) as exc:
        parse_rule("gst_efficiency <= 25", "t")
    assert "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio / 32" in exc.value.one_line()


@pytest.mark.parametrize("name", [
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "bank_conflicts_ld_raw", "bank_conflicts_st_raw",
])
def test_raw_bank_conflict_counters_are_refused(name):
    with refused("shared_excessive_wavefronts"):
        parse_rule(f"{name} == 0", "t")


@pytest.mark.parametrize("name", ["duration_us", "gpu__time_duration.sum", "dram_throughput_gbps"])
def test_single_profiled_durations_are_refused(name):
    with refused("single profiled launch.*`duration`"):
        parse_rule(f"{name} <= 40", "t")


def test_time_is_never_gated_with_equality():
    with refused("not deterministic"):
        parse_rule("duration == 40", "t")


def test_unknown_metric_suggests_the_closest():
    with refused("did you mean shared_excessive_wavefronts"):
        parse_rule("shared_excesive_wavefronts == 0", "t")


@pytest.mark.parametrize("text, fragment", [
    ("", "holds no rules"),
    ("[stage.smem]\nrule = ['duration < previous']", "unknown key 'rule'.*did you mean rules"),
    ("[stage.smem]\nrules = []", "non-empty list"),
    ("[stage.smem]\nrules = 'duration < previous'", "non-empty list"),
    ("[stage.smem]\noptional = 'yes'\nrules = ['duration < previous']", "true or false"),
    ("[stage.smem]\nrules = [3]", "string or a table"),
    ("[kernel.'transpose_(']\nrules = ['duration < previous']", "bad kernel-name regular expression"),
    ("stages = 1", "unknown key 'stages'.*did you mean stage"),
    ("version = 2\n[stage.a]\nrules = ['duration < previous']", "version 2"),
    ("[stage.a]\nrules = ['shared_excessive_wavefronts = 0']", "'=' is written '=='"),
    ("[stage.a]\nrules = ['shared_excessive_wavefronts == lots']", "cannot parse the limit"),
    ("[stage.a]\nrules = ['shared_excessive_wavefronts <= 1e999']", "not a finite number"),
    ("[stage.a]\nrules = ['duration <= 0 * previous']", "factor must be positive"),
])
def test_bad_files_are_thresholds_errors(text, fragment):
    with refused(fragment):
        parse_thresholds(text)


_FRAGMENTS = ["[stage.smem]", "[stage.padded]", "[kernel.'transpose_.*']", "[stage]", "rules = [", "]", "[[stage]]",
              "'duration < previous',", '"shared_excessive_wavefronts == 0",', "optional = true", "optional = 3",
              "{ rule = 'duration <= 40', unit = 'ms' },", "{ unit = '%' },", "version = 1", "stage = 3",
              "rules = 'x'", "'gst_efficiency <= 25',", "'l1tex__t_sectors.sum >= 1e3 sector',", "= =", "[",
              "'event_gbps >= 0.9 * baseline',", "kernel = { a = 1 }", "'x' = 1", "rules = [[1, 2]]"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parser_raises_only_its_own_errors_on_any_text(text):
    try:
        parse_thresholds(text)
    except ProfilerReportError:
        pass


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=12))
def test_parser_raises_only_its_own_errors_on_toml_ish_text(lines):
    try:
        parse_thresholds("\n".join(lines))
    except ProfilerReportError:
        pass


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
    | st.sampled_from(["duration < previous", "shared_excessive_wavefronts == 0 %", "gst_efficiency <= 2"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["stage", "kernel", "rules", "rule", "unit", "optional", "smem", "version", "x"]),
        inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_parser_raises_only_its_own_errors_on_any_structure(data):
    try:
        parse_thresholds_data(data)
    except ProfilerReportError:
        pass


_RULE_TOKENS = ["duration", "event_gbps", "shared_excessive_wavefronts", "l1tex__t.sum", "==", "<=", ">", "<", "*",
                "baseline", "previous", "1.5", "-3", "1e999", "%", "us", "GB/s", "MB", " ", "nan", "inf", "0"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_RULE_TOKENS), st.text(max_size=4)), max_size=8), st.text(max_size=5))
def test_rule_parser_raises_only_its_own_errors(parts, unit):
    try:
        parse_rule(" ".join(parts), "t", unit=unit)
    except ProfilerReportError:
        pass


def test_readme_example_parses_and_runs(good_run):
    text = (REPO / "README.md").read_text() if (REPO / "README.md").is_file() else ""
    if "## Regression gate" not in text:
        pytest.skip("README has no regression-gate section")
    toml = re.search(r"```toml\n(.*?)```", text[text.index("## Regression gate"):], re.S).group(1)
    results = gate.check_run(parse_thresholds(toml, "README.md"), good_run)
    assert {r.verdict for r in results} <= {"pass", "not measured", "skipped"}
    assert by(results, "unrolled", "event_gbps >= 3000 GB/s").verdict == "not measured"


def test_default_thresholds_state_the_staged_transpose(default_thresholds):
    rules = {(r.stage, r.text) for r in default_thresholds.rules}
    assert ("smem", "shared_excessive_wavefronts > 0") in rules
    assert ("smem", "shared_wavefronts_per_load >= 16") in rules
    assert ("naive", "global_store_efficiency_pct <= 25 %") in rules
    for stage in ("padded", "unrolled", "vec_swizzled", "vec_deep", "vec_colwalk"):
        assert (stage, "shared_excessive_wavefronts == 0") in rules
    for stage in ("smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk"):
        assert (stage, "global_store_efficiency_pct == 100 %") in rules
    for stage in ("smem", "padded", "unrolled", "vec_padded", "vec_deep", "vec_colwalk"):
        assert (stage, "duration < previous") in rules
    # vec_swizzled is not measurably faster than vec_padded on the H200: deliberately no time rule.
    assert not [r.text for r in default_thresholds.rules if r.stage == "vec_swizzled" and r.kind == "timing"]
    optional = {r.stage for r in default_thresholds.rules if r.optional}
    assert optional == {"vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk", "vec_tuned"}


# ---------------------------------------------------------------------------------------------
# Evaluation (pure)


def test_counts_are_gated_exactly():
    rule = parse_rule("shared_excessive_wavefronts == 0", "t")
    bad = rule.evaluate("unrolled", Band.point(16252928, "wavefront"))
    assert bad.verdict == "fail" and "16,252,928" in bad.message
    assert rule.evaluate("padded", Band.point(0, "wavefront")).verdict == "pass"
    assert rule.evaluate("padded", Band.point(1, "wavefront")).verdict == "fail"
    assert parse_rule("shared_wavefronts_per_load >= 16", "t").evaluate("s", Band.point(15.999)).verdict == "fail"


def test_not_measured_is_never_a_pass():
    rule = parse_rule("shared_excessive_wavefronts == 0", "t")
    r = rule.evaluate("padded", None, why_missing="the capture lacks it")
    assert r.verdict == "not measured" and r.message == "the capture lacks it"
    rel = parse_rule("duration < previous", "t")
    assert rel.evaluate("smem", Band(50, 49, 51, "us"), None).verdict == "not measured"
    assert gate.exit_code([r], "fail") == 1
    assert gate.exit_code([r], "warn") == 0


def test_time_fails_only_beyond_the_spread():
    rule = parse_rule("duration <= 1.10 * baseline", "t")
    base = Band(100, 98, 102, "us")  # limit: median 110, band 107.8 .. 112.2
    assert rule.evaluate("s", Band(109, 105, 113, "us"), base).verdict == "pass"
    noisy = rule.evaluate("s", Band(115, 111, 120, "us"), base)
    assert noisy.verdict == "pass" and "within the run-to-run spread" in noisy.message
    slow = rule.evaluate("s", Band(120, 113, 125, "us"), base)
    assert slow.verdict == "fail" and "beyond the run-to-run spread" in slow.message
    faster = parse_rule("duration < previous", "t")
    assert faster.evaluate("s", Band(52, 51, 53, "us"), Band(99, 98, 100, "us")).verdict == "pass"
    assert faster.evaluate("s", Band(101, 100, 102, "us"), Band(99, 98, 100.5, "us")).verdict == "pass"  # overlap
    assert faster.evaluate("s", Band(110, 108, 112, "us"), Band(99, 98, 100, "us")).verdict == "fail"
    gbps = parse_rule("event_gbps >= 0.9 * baseline", "t")
    assert gbps.evaluate("s", Band(800, 780, 820, "GB/s"), Band(1000, 990, 1010, "GB/s")).verdict == "fail"
    assert gbps.evaluate("s", Band(880, 860, 895, "GB/s"), Band(1000, 990, 1010, "GB/s")).verdict == "pass"


def test_absolute_time_limit_in_another_unit():
    rule = parse_rule("duration <= 0.04 ms", "t")
    assert rule.evaluate("s", Band(39, 38, 41, "us")).verdict == "pass"
    r = rule.evaluate("s", Band(45, 42, 47, "us"))
    assert r.verdict == "fail" and r.limit == pytest.approx(40)


# ---------------------------------------------------------------------------------------------
# The gate on the real captures


def test_good_capture_passes_every_count_rule(good_run, default_thresholds):
    results = gate.check_run(default_thresholds, good_run)
    # The fixture was recorded before the vec_tuned stage existed: its optional rules are skipped.
    assert {r.stage for r in results if r.verdict == "skipped"} == {"vec_tuned"}
    counted = [r for r in results if r.metric != "event_median_us" and r.stage != "vec_tuned"]
    assert counted and all(r.verdict == "pass" for r in counted), [r.message for r in counted if r.verdict != "pass"]
    timed = [r for r in results if r.metric == "event_median_us" and r.stage != "vec_tuned"]
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
    assert skipped == {"vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk", "vec_tuned"}
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
    t = parse_thresholds('[stage.padded]\nrules = ["l1tex__t_sectors_pipe_lsu_mem_global_op_sts.sum == 0"]')
    (r,) = gate.check_run(t, good_run)
    assert r.verdict == "not measured" and "did you mean" in r.message


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


# ---------------------------------------------------------------------------------------------
# Command line


def test_cli_regressed_capture_exits_1_naming_the_rule(monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, "check", REGRESSED_REP, "--missing", "warn")
    assert code == 1
    assert "FAIL unrolled: shared_excessive_wavefronts == 0" in out
    assert "16,252,928" in out and "Traceback" not in err


def test_cli_good_capture_exits_0(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "check", GOOD_REP, "--missing", "warn")
    assert code == 0, out
    assert "FAIL" not in out and "not measured" in out


def test_cli_not_measured_fails_by_default(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "check", GOOD_REP)
    assert code == 1
    assert "counted as failures: --missing fail" in out


@pytest.mark.parametrize("name, fragment", [
    ("syntax_error.toml", "is not valid TOML"),
    ("unknown_metric.toml", "did you mean shared_excessive_wavefronts"),
    ("unknown_stage.toml", "did you mean padded"),
    ("wrong_unit.toml", "does not match global_store_efficiency_pct"),
    ("nvprof_name.toml", "global_store_efficiency_pct"),
    ("raw_bank_conflicts.toml", "shared_excessive_wavefronts"),
    ("single_duration.toml", "`duration`"),
])
def test_cli_bad_thresholds_exit_2_with_one_line(monkeypatch, capsys, name, fragment):
    code, out, err = cli(monkeypatch, capsys, "check", GOOD_REP, "--thresholds", BAD / name)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and fragment in err
    assert "Traceback" not in err


def test_cli_unreadable_captures_exit_2(monkeypatch, capsys, tmp_path):
    empty = tmp_path / "empty.ncu-rep"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.ncu-rep"
    junk.write_bytes(b"\x00not a report" * 50)
    for capture in (tmp_path / "missing.ncu-rep", empty, junk, tmp_path):
        code, out, err = cli(monkeypatch, capsys, "check", capture)
        assert code == 2, (capture, out, err)
        assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err


def test_cli_missing_default_thresholds_file(monkeypatch, capsys, tmp_path):
    code, _, err = cli(monkeypatch, capsys, "check", GOOD_REP, cwd=tmp_path)
    assert code == 2
    assert "thresholds file thresholds.toml not found" in err and "--thresholds" in err


def test_module_entry_in_a_subprocess(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    bad = subprocess.run([sys.executable, "-m", "profiler_report", "check", str(GOOD_REP), "--thresholds",
                          str(BAD / "syntax_error.toml")], cwd=REPO, env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "profiler_report", "check", str(tmp_path / "none.ncu-rep")],
                             cwd=REPO, env=env, capture_output=True, text=True)
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr


def test_junit_and_json(monkeypatch, capsys, tmp_path):
    junit = tmp_path / "ci" / "check.xml"
    code, out, _ = cli(monkeypatch, capsys, "check", REGRESSED_REP, "--junit", junit, "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["exit_code"] == 1 and doc["counts"] == {"pass": 7, "fail": 1, "not measured": 3, "skipped": 14}
    root = ET.parse(junit).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == len(doc["results"]) == 25
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 4 == int(root.get("failures"))  # the conflict rule + 3 time rules not measured
    conflict = [c for c in failed if c.get("name") == "shared_excessive_wavefronts == 0"]
    assert [c.get("classname") for c in conflict] == ["profiler-report.unrolled"]
    assert conflict[0].find("failure").get("type") == "fail"
    assert len([c for c in cases if c.find("skipped") is not None]) == 14
    assert not list(tmp_path.glob("ci/.*.tmp"))


def test_junit_under_missing_warn_marks_not_measured_skipped(regressed_run, default_thresholds):
    tree = gate.junit_tree(gate.check_run(default_thresholds, regressed_run), missing="warn")
    root = tree.getroot()
    assert (root.get("failures"), root.get("skipped")) == ("1", "17")  # 14 skipped + 3 not measured


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


def test_cli_diff(monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, "diff", GOOD_REP, REGRESSED_REP)
    assert code == 0 and err == ""
    assert any(line.startswith("!!") and "shared_excessive_wavefronts " in line and "from 0" in line
               for line in out.splitlines())
    code, out, _ = cli(monkeypatch, capsys, "diff", GOOD_REP, GOOD_REP, "--format", "json")
    assert code == 0 and not any(r["flagged"] for r in json.loads(out)["rows"])


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


def test_write_atomic_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.xml"
    gate.write_atomic(target, b"<a/>")
    assert target.read_bytes() == b"<a/>" and [p.name for p in tmp_path.iterdir()] == ["out.xml"]


def test_fmt_value():
    assert gate.fmt_value(math.nan) == "not measured"
    assert gate.fmt_value(16252928.0, "wavefront") == "16,252,928 wavefront"
    assert gate.fmt_value(12.5, "%") == "12.5 %"
