"""``--stage`` and ``--ceiling`` (analysis/stages.py): one matching for both (short, C++ display
and mangled names, NVTX range), and a label given twice is bad input, never a silent ``LABEL#2``."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_support import GOOD_REP, cli


def test_a_ceiling_matches_the_display_name_as_a_stage_does(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(monkeypatch, capsys, "summary", GOOD_REP, "--stage", "n=void transpose_naive<float>",
                         "--ceiling", r"c=void copy_tiled<float>\(")
    assert code == 0, err
    rows = [line.split(",")[:3] for line in out.splitlines()[1:]]
    assert rows == [["n", "stage", "transpose_naive"], ["c", "ceiling", "copy_tiled"]]


def test_a_ceiling_matches_the_mangled_name(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    code, out, err = cli(monkeypatch, capsys, "summary", GOOD_REP, "--stage", "n=^transpose_naive$",
                         "--ceiling", "c=^_Z10copy_tiled")
    assert code == 0, err
    assert [line.split(",")[:2] for line in out.splitlines()[1:]] == [["n", "stage"], ["c", "ceiling"]]


@pytest.mark.parametrize("args", [("--ceiling", "c=copy", "--stage", "c=naive"),
                                  ("--stage", "a=naive", "--stage", "a=smem"),
                                  ("--ceiling", "c=copy", "--ceiling", "c=memcpy")])
@pytest.mark.parametrize("command", ["summary", "render", "check"])
def test_a_label_given_twice_is_bad_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path, args: tuple[str, ...], command: str) -> None:
    where = ("--out", str(tmp_path / "r")) if command == "render" else ()
    capture = ("--from", GOOD_REP) if command == "render" else (GOOD_REP,)
    code, out, err = cli(monkeypatch, capsys, command, *capture, *where, *args)
    label = args[1].split("=")[0]
    assert code == 2 and err.count("\n") == 1 and f"label '{label}' is given twice" in err, err
    assert not (tmp_path / "r").exists()
