"""`summary`'s formats: a table on a terminal, CSV when piped, the versioned JSON document
(validated against the JSON Schema shipped in the package) with a bottleneck class per stage, and
the agent text (at most ~40 lines per ladder), on the committed H200 captures."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from conftest import load_run_once
from gate_support import cli
from schema_support import errors, validate

from profiler_report.analysis.assessment import COMPUTE_SOL, MEMORY_SOL, bottleneck
from profiler_report.analysis.summary import SUMMARY_SCHEMA, summary_schema_path

ROOT = Path(__file__).resolve().parents[2]
HIST = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"
TRANSPOSE = ROOT / "reports" / "h200" / "profile.ncu-rep"
EXAMPLE = ROOT / "examples" / "agent" / "transpose-h200.txt"


@pytest.mark.parametrize("memory, compute, expected", [
    (96.0, 10.0, ("at roofline", "memory")), (10.0, 95.0, ("at roofline", "compute")),
    (59.9, 59.9, ("underutilized", "")), (60.0, 20.0, ("memory-bound", "memory")),
    (40.0, 80.0, ("compute-bound", "compute")), (math.nan, 50.0, ("not measured", "")),
])
def test_the_bottleneck_class_from_the_speed_of_light(memory, compute, expected):
    assert bottleneck(memory, compute) == expected


def _schema() -> dict:
    return json.loads(summary_schema_path().read_text())


def test_the_json_validates_against_the_shipped_schema(monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, "summary", HIST, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc, _schema())
    assert doc["schema"] == SUMMARY_SCHEMA == _schema()["properties"]["schema"]["const"]
    by = {a["stage"]: a for a in doc["assessment"]}
    assert list(by) == [s["stage"] for s in doc["stages"]]
    # The class rests on the capture's own speed-of-light values.
    run = load_run_once(HIST)
    for s in run.summary.itertuples():
        mem, comp = run.capture.value(s.launch_id, MEMORY_SOL), run.capture.value(s.launch_id, COMPUTE_SOL)
        assert by[s.stage]["memory_sol_pct"] == pytest.approx(mem)
        assert by[s.stage]["bottleneck"] == bottleneck(mem, comp)[0]
    assert by["warp_private_vec"]["bottleneck"] == "memory-bound"  # 84 % of the memory roof
    assert by["global_atomics"]["bottleneck"] == "underutilized"  # contended L2 atomics: 2.5 %
    assert by["global_atomics"]["top_stalls"][0]["reason"] == "long_scoreboard"
    assert by["shared_atomics"]["verdict"].startswith("105.68x faster") and by["copy"]["verdict"] == ""


def test_the_schema_rejects_what_it_should():
    schema = _schema()
    doc = {"schema": SUMMARY_SCHEMA, "columns": {}, "stages": [], "expectations": [], "deltas": [],
           "sanitizer": {}, "assessment": [{"stage": "a", "bottleneck": "fast"}]}
    found = errors(doc, schema)
    assert any("'fast' not in" in e for e in found) and any("lacks 'top_stalls'" in e for e in found)
    assert errors({**doc, "schema": "profiler-report.summary/1"}, schema)


def test_the_schema_ships_in_the_package():
    import tomllib

    assert summary_schema_path().is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "schemas/*.json" in data["profiler_report"]


def test_a_table_on_a_terminal_and_csv_when_piped(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "summary", HIST)  # captured: not a terminal
    assert code == 0 and out.startswith("stage,role,kernel,launch_id,")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    code, out, _ = cli(monkeypatch, capsys, "summary", HIST)
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["stage", "role"] and "bottleneck" in lines[0] and set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + 5 and lines[5].split()[0] == "warp_private_vec" and lines[5].endswith("memory-bound")
    assert "92.0" in lines[5] and "2,849" in lines[5]  # ncu's duration, the event-timed GB/s: as on the page
    code, forced, _ = cli(monkeypatch, capsys, "summary", HIST, "--format", "csv")
    assert forced.startswith("stage,role,kernel,")


def test_the_agent_text_is_short_and_says_what_to_do(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "summary", HIST, "--format", "agent")
    lines = out.splitlines()
    assert code == 0 and len(lines) <= 40
    assert lines[0].startswith(f"profiler-report summary of {HIST}: NVIDIA H200")
    stage = next(i for i, ln in enumerate(lines) if ln.startswith("4. warp_private_vec (hist_warp_vec): "))
    assert "verdict: 4.16x faster than warp_private" in lines[stage + 1]
    assert lines[stage + 2].startswith("   limiter: memory-bound (memory SOL 84.0%") and "next: " in lines[stage + 2]
    assert "000's" not in out  # the next step without the page's lead-in


@pytest.mark.skipif(not TRANSPOSE.is_file(), reason="the recorded transpose report is not here")
def test_the_committed_agent_example_is_this_capture_s(monkeypatch, capsys):
    # When the recorded report or a verdict's wording changes, remake the example:
    # profiler-report summary --format agent reports/h200/profile.ncu-rep > examples/agent/transpose-h200.txt
    code, out, _ = cli(monkeypatch, capsys, "summary", "reports/h200/profile.ncu-rep", "--format", "agent")
    assert code == 0 and len(out.splitlines()) <= 40
    assert out == EXAMPLE.read_text()
