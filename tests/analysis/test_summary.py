"""A capture whose counts are impossible (analysis/summary.py): an access count below its ideal,
or a negative excess, is a corrupt capture (exit 2, one line), never a negative figure that
passes a gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_support import cli
from hostile_support import Raw


def _below_ideal(tmp_path: Path) -> Path:
    """padded's shared wavefronts 1,000,000, below their ideal 1,048,576; ncu's derived excess
    column removed, so the excess would be computed: -48,576."""
    return (Raw().drop_column("derived__memory_l1_wavefronts_shared_excessive")
            .set("padded", "memory_l1_wavefronts_shared", "1000000").write(tmp_path / "below_ideal.csv"))


@pytest.mark.parametrize("command", ["check", "summary", "render"])
def test_actual_below_ideal_is_a_corrupt_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], command: str) -> None:
    capture = _below_ideal(tmp_path)
    rules = tmp_path / "t.toml"
    rules.write_text('[kernel."transpose"]\nrules = ["shared_excessive_wavefronts <= 100"]\n')
    args = {"check": (capture, "--thresholds", rules), "summary": (capture,),
            "render": ("--from", capture, "--out", tmp_path / "r")}[command]
    code, out, err = cli(monkeypatch, capsys, command, *args)
    assert code == 2 and err.count("\n") == 1, err
    assert "memory_l1_wavefronts_shared = 1000000 is below memory_l1_wavefronts_shared_ideal = 1048576" in err
    assert "-48576" not in out and "passed" not in out


def test_a_negative_derived_excess_is_a_corrupt_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    capture = Raw().set("smem", "derived__memory_l2_theoretical_sectors_global_excessive", "-5").write(
        tmp_path / "negative.csv")
    code, _, err = cli(monkeypatch, capsys, "summary", capture)
    assert code == 2 and "negative" in err and err.count("\n") == 1, err
