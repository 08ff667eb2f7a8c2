"""`profiler-report check`: exit codes, one-line errors, the subprocess entry, --junit and --json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from gate_support import BAD, GOOD_REP, REGRESSED_REP, REPO, cli

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
    ("raw_typo.toml", "did you mean l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum?"),
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
    assert "(fix: " in err  # every bad-input line says how to fix it
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
    assert doc["exit_code"] == 1 and doc["counts"] == {"pass": 7, "fail": 1, "not measured": 3, "skipped": 21}
    root = ET.parse(junit).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == len(doc["results"]) == 32  # the three later stages' optional rules skipped
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 4 == int(root.get("failures"))  # the conflict rule + 3 time rules not measured
    conflict = [c for c in failed if c.get("name") == "shared_excessive_wavefronts == 0"]
    assert [c.get("classname") for c in conflict] == ["profiler-report.unrolled"]
    assert conflict[0].find("failure").get("type") == "fail"
    assert len([c for c in cases if c.find("skipped") is not None]) == 21
    assert not list(tmp_path.glob("ci/.*.tmp"))


def test_junit_rewrites_its_own_report_and_never_another_file(monkeypatch, capsys, tmp_path):
    # --junit once replaced the capture being checked (or a report's page) with the XML, exit 0.
    junit = tmp_path / "check.xml"
    for _ in range(2):  # a CI job run again rewrites its report
        code, _, _ = cli(monkeypatch, capsys, "check", GOOD_REP, "--junit", junit)
        assert code in (0, 1) and ET.parse(junit).getroot().tag == "testsuites"
    capture = tmp_path / "profile.ncu-rep"
    shutil.copyfile(GOOD_REP, capture)
    page = tmp_path / "index.html"
    page.write_text("<!doctype html><p>a live report</p>\n")
    for target in (capture, page):
        before = target.read_bytes()
        code, _, err = cli(monkeypatch, capsys, "check", capture, "--junit", target)
        assert code == 2, err
        assert "is an existing file that is not a JUnit report: not overwritten" in err and "(fix: " in err
        assert target.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# Issue 12: where the value came from, misleading lines, odd values


COMPUTED_CSV = REPO / "tests" / "data" / "bad" / "no_derived_excessive.csv"  # derived metric dropped


def test_table_json_and_junit_say_whether_excessive_wavefronts_were_ncus_or_computed(good_run):
    from profiler_report import gate
    from profiler_report.analysis.run import load_run

    rules = gate.parse_thresholds('[stage.smem]\nrules = ["shared_excessive_wavefronts > 0", '
                                  '"shared_wavefronts_per_load >= 16"]\n')
    for run, source in ((load_run(COMPUTED_CSV), "computed"), (good_run, "ncu")):
        results = gate.check_run(rules, run)
        assert [r.verdict for r in results] == ["pass", "pass"]
        assert f"16,252,928 wavefronts ({source})" in gate.results_table(results)
        assert [r["source"] for r in gate.results_json(results)["results"]] == [source, None]
        case = gate.junit_tree(results).getroot().find(".//testcase")
        assert case.find("properties/property").attrib == {"name": "source", "value": source}


@pytest.mark.parametrize("where, words", [("dir", "is a directory"), ("/dev/null", "is not a regular file")])
def test_a_thresholds_path_that_is_not_a_file_is_not_called_missing(monkeypatch, capsys, tmp_path, where, words):
    path = tmp_path if where == "dir" else where
    code, _, err = cli(monkeypatch, capsys, "check", GOOD_REP, "--thresholds", path)
    assert code == 2 and words in err and "not found" not in err and err.count("\n") == 1


def test_a_limit_in_micro_seconds_is_read(monkeypatch, capsys, tmp_path):
    from profiler_report.gate.grammar import parse_rule

    for unit in ("\u00b5s", "\u03bcs"):
        assert parse_rule(f"event_median_us <= 40 {unit}", "t").limit_in("us") == 40
    assert parse_rule("event_median_us <= 0.04 ms", "t").limit_in("us") == pytest.approx(40)


def test_an_infinite_value_passes_no_exact_comparison():
    from profiler_report.gate.rules import Band, Rule, compare_exact

    inf = float("inf")
    assert not compare_exact("==", inf, 0) and not compare_exact("<=", inf, 0) and not compare_exact(">=", 0, inf)
    result = Rule("x == 0", "shared_excessive_wavefronts", "headline", "==", value=0.0).evaluate("s", Band.point(inf))
    assert result.verdict == "fail"


def test_kernel_sections_match_the_display_and_mangled_names(good_run):
    from profiler_report import gate

    rules = gate.parse_thresholds('[kernel."transpose_vec_deep<float, \\\\(int\\\\)2>\\\\(const T1"]\n'
                                  'rules = ["shared_excessive_wavefronts == 0"]\n'
                                  '[kernel."^_Z14transpose_smemIfEvPKT_PS0_ii$"]\n'
                                  'rules = ["shared_excessive_wavefronts > 0"]\n')
    assert [(r.stage, r.verdict) for r in gate.check_run(rules, good_run)] == [("vec_deep", "pass"), ("smem", "pass")]
def test_markdown_for_the_step_summary_beside_junit(monkeypatch, capsys, tmp_path):
    junit = tmp_path / "check.xml"
    code, out, _ = cli(monkeypatch, capsys, "check", REGRESSED_REP, "--missing", "warn", "--format", "markdown",
                       "--junit", junit)
    assert code == 1  # the same verdict as the table
    assert out.startswith("### profiler-report check: FAILED")
    assert "| unrolled | `shared_excessive_wavefronts == 0`" in out
    assert ET.parse(junit).getroot().get("failures") == "1"
    code, out, _ = cli(monkeypatch, capsys, "check", GOOD_REP, "--missing", "warn", "--format", "markdown")
    assert code == 0 and out.startswith("### profiler-report check: passed")


def test_the_readme_ci_job_commands_run(monkeypatch, capsys, tmp_path):
    readme = (REPO / "README.md").read_text()
    job = readme[readme.index("```yaml"):]
    job = job[:job.index("\n```", 3)].replace("\\\n", " ")
    commands = [line.split("run:", 1)[-1].split(">>")[0].strip().split()
                for line in job.splitlines() if "profiler-report " in line]
    assert [c[1] for c in commands] == ["summary", "check"]
    for args in commands:
        args = [str(tmp_path / a) if a == "check.xml" else a for a in args[1:]]
        code, out, err = cli(monkeypatch, capsys, *args)
        assert code == 0, err
        assert out.startswith(f"### profiler-report {args[0]}")
    assert ET.parse(tmp_path / "check.xml").getroot().get("failures") == "0"


def test_a_capture_of_a_case_without_thresholds_is_not_gated_on_the_transposes(monkeypatch, capsys):
    # The histogram example (a case folder) has no thresholds.toml: ./thresholds.toml is the
    # transpose's, whose stages it lacks (the error used to be about a missing 'naive').
    code, out, err = cli(monkeypatch, capsys, "check", REPO / "reports" / "h200-histogram" / "profile.ncu-rep")
    assert code == 2 and out == ""
    assert "was made by case 'histogram', which has no thresholds.toml here" in err
    assert "--case examples/histogram" in err and "naive" not in err and len(err.strip().splitlines()) == 1
