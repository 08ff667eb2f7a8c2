"""api: profiler_report.load(...) and the Profile's tables, check and render, on the real captures;
nothing printed, errors raised (never an exit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, F32, F32_REGRESSED

import profiler_report
from profiler_report.analysis.summary import summary_document
from profiler_report.errors import InputError, ReportUnreadableError, ThresholdsError

ROOT = Path(__file__).resolve().parents[2]
THRESHOLDS = ROOT / "thresholds.toml"


@pytest.fixture(scope="module")
def prof():
    return profiler_report.load(F32 / "profile.ncu-rep")


def test_summary_is_the_per_stage_table_with_units(prof, good_run):
    df = prof.summary()
    expected = good_run.summary  # the same capture through load_run
    assert df.equals(expected)
    assert list(df["stage"]) == prof.stages == list(expected["stage"])
    units = df.attrs["units"]
    assert units["global_store_efficiency_pct"] == "%" and units["duration_us"] == "us"
    assert units["shared_excessive_wavefronts"] == units["shared_excessive_wavefronts_ld"] == "wavefront"
    assert "derived__memory_l1_wavefronts_shared_excessive" in df.attrs["sources"]["shared_excessive_wavefronts"]
    assert prof.units["global_store_efficiency_pct"] == "%"
    assert df.loc[df["stage"] == "naive", "global_store_efficiency_pct"].item() == 12.5


def test_summary_is_a_copy(prof):
    df = prof.summary()
    df.loc[:, "duration_us"] = -1.0
    assert (prof.summary()["duration_us"] > 0).all()


def test_instructions_name_their_stage(prof):
    ins = prof.instructions()
    assert list(ins.columns[:3]) == ["stage", "launch_id", "pc_offset"]
    assert ins["stage"].notna().all() and set(ins["stage"]) <= set(prof.stages)
    smem = ins[(ins["stage"] == "smem") & (ins["side"] == "load")]
    assert smem["shared_excessive_wavefronts"].sum() > 0  # the [32][32] tile's column read conflicts
    assert ins.attrs["units"]["shared_excessive_wavefronts"] == "wavefront"


def test_findings_are_ncus_rule_results_per_stage(prof):
    found = prof.findings()
    assert list(found.columns[:2]) == ["stage", "launch_id"]
    assert "SharedMemoryConflicts" in set(found.loc[found["stage"] == "smem", "rule"])


def test_check_returns_the_rule_table_and_the_exit_code():
    regressed = profiler_report.load(F32_REGRESSED / "profile.ncu-rep")
    table = regressed.check(THRESHOLDS, missing="warn")
    assert table.attrs["exit_code"] == 1 and table.attrs["passed"] is False
    failed = table[table["verdict"] == "fail"]
    assert list(zip(failed["stage"], failed["rule"], strict=True)) == [("unrolled", "shared_excessive_wavefronts == 0")]
    assert failed["measured"].item() == 16252928.0 and failed["unit"].item() == "wavefront"


def test_check_raises_the_projects_errors(prof, tmp_path):
    bad = DATA / "thresholds" / "syntax_error.toml"
    with pytest.raises(ThresholdsError) as exc:
        prof.check(bad)
    assert exc.value.exit_code == 2 and exc.value.hint
    with pytest.raises(ValueError):
        prof.check(THRESHOLDS, missing="maybe")


def test_render_writes_the_report_from_the_loaded_run(prof, tmp_path):
    files = prof.render(tmp_path / "out")
    assert [f.name for f in files] == ["index.html", "summary.csv", "summary.json"]
    html = (tmp_path / "out" / "index.html").read_text()
    assert 'id="stage-naive"' in html and "Recorded capture" in html
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == \
        json.loads(json.dumps(summary_document(prof.run.analysis), default=str))


def test_render_refuses_a_live_report_folder(prof, tmp_path):
    live = tmp_path / "live"
    live.mkdir()
    (live / "index.html").write_text("live page\n")
    (live / "provenance.json").write_text('{"mode": "live"}\n')
    with pytest.raises(InputError) as exc:
        prof.render(live)
    assert "live run's report" in exc.value.message and "--force" in exc.value.one_line()
    assert (live / "index.html").read_text() == "live page\n"


def test_stage_labels_and_bad_input_raise_never_exit():
    labelled = profiler_report.load(F32 / "raw.csv", {"slow": "transpose_naive$", "fast": "transpose_vec_deep"})
    assert labelled.stages == ["slow", "fast"] and labelled.case is None
    with pytest.raises(ReportUnreadableError):
        profiler_report.load(DATA / "bad" / "truncated.ncu-rep")
    with pytest.raises(InputError, match="bad regular expression"):
        profiler_report.load(F32 / "raw.csv", [("x", "transpose_(")])


def test_nothing_is_printed(capfd, tmp_path):
    prof = profiler_report.load(F32 / "raw.csv")
    prof.summary(), prof.instructions(), prof.findings(), prof.check(THRESHOLDS, missing="warn")
    with pytest.raises(ReportUnreadableError):
        profiler_report.load(DATA / "bad" / "empty.csv")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_import_profiler_report_stays_light():
    code = "import sys, profiler_report; print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.stdout.strip() == "[]", res.stderr


def test_the_readme_example_runs(monkeypatch, tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### From Python"):]
    code = section[section.index("```python\n") + 10:section.index("\n```", section.index("```python"))]
    code = code.replace('"reports/', f'"{ROOT}/reports/').replace('"thresholds.toml"', f'"{THRESHOLDS}"')
    monkeypatch.chdir(tmp_path)  # render("out/") writes here
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["table"].attrs["exit_code"] == 0
    assert (tmp_path / "out" / "index.html").is_file()
