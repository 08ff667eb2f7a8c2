"""A ladder of captures that are not comparable (a float32 4096x4096 and a float64 2048x2048
capture): the check of ``diff --strict`` (analysis.compare.differences) refuses it (exit 2)
unless ``--allow-mixed``; then no ratio is taken between two captures and the provenance says
"mixed"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import F32, F64
from gate_support import cli

from profiler_report.analysis.run import load_run

LADDER = (F32 / "raw.csv", F64 / "profile.ncu-rep")


@pytest.mark.parametrize("command", ["render", "summary", "check"])
def test_a_mixed_ladder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], command: str) -> None:
    args = ("--from", LADDER[0], "--from", LADDER[1], "--out", tmp_path / "r") if command == "render" else LADDER
    code, _, err = cli(monkeypatch, capsys, command, *args)
    assert code == 2 and err.count("\n") == 1, err
    assert "the captures of this ladder are not comparable (dtype: float32 (raw), float64 (profile)" in err
    assert not (tmp_path / "r").exists()


def test_allow_mixed_takes_no_ratio_between_captures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    code, _, err = cli(monkeypatch, capsys, "render", "--from", LADDER[0], "--from", LADDER[1], "--out", out,
                       "--allow-mixed")
    assert code == 0, err
    html = (out / "index.html").read_text()
    assert "stages take the kernel from" not in html  # the headline would span the two captures
    assert "mixed: float32 (raw), float64 (profile)" in html
    doc = json.loads((out / "summary.json").read_text())
    assert "naive#2" not in [d["stage"] for d in doc["deltas"]]
    run = load_run(list(LADDER))
    assert set(run.analysis.breaks) == {"naive#2"}
    assert run.analysis.verdicts["naive#2"].startswith("Not compared with the stage before: it is from another capture")


def test_a_comparable_ladder_is_not_mixed() -> None:
    files = sorted((F32.parent / "foreign" / "ladder").glob("*.ncu-rep"))
    run = load_run(files)
    assert len(files) == 4 and run.analysis.mixed == {} and run.analysis.breaks == {}
