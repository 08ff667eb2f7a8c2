"""The gate on hostile thresholds files: an optional section whose name is no stage of the
capture's case is an error (a typo would switch its rules off), and a relative limit that
overflows is the file's fault (exit 2), not the kernel's (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_support import GOOD_REP, cli
from hostile_support import RANGE, Raw


def _check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
           capture: Path = GOOD_REP) -> tuple[int, str, str]:
    rules = tmp_path / "t.toml"
    rules.write_text(text)
    return cli(monkeypatch, capsys, "check", capture, "--thresholds", rules)


@pytest.mark.parametrize(("name", "near"), [("vec_tuend", "vec_tuned"), ("ve_tuned", "vec_tuned"),
                                            ('"VEC_PADDED"', "vec_padded"), ('"vec_swizzled "', "vec_swizzled")])
def test_an_optional_section_with_a_typo_is_an_error(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str,
                                                     near: str) -> None:
    code, out, err = _check(monkeypatch, capsys, tmp_path,
                            f'[stage.{name}]\noptional = true\nrules = ["shared_excessive_wavefronts == 0"]\n')
    assert code == 2 and err.count("\n") == 1, err
    assert "is not a stage of case transpose" in err and f"did you mean {near}" in err
    assert "skipped" not in out


def test_an_optional_known_stage_that_is_absent_is_skipped(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    partial = Raw().drop_launches("vec_deep").write(tmp_path / "partial.csv")
    code, out, err = _check(monkeypatch, capsys, tmp_path,
                            '[stage.vec_deep]\noptional = true\nrules = ["shared_excessive_wavefronts == 0"]\n',
                            partial)
    assert code == 0 and "skipped" in out, out + err


def test_an_optional_near_name_in_a_foreign_capture_is_an_error(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    raw = Raw()
    for row in raw.rows:  # no NVTX ranges: a capture made elsewhere, its stages the kernel names
        row[raw.col(RANGE)] = ""
    foreign = raw.write(tmp_path / "foreign.csv")
    section = '[stage.{}]\noptional = true\nrules = ["shared_excessive_wavefronts == 0"]\n'
    code, out, err = _check(monkeypatch, capsys, tmp_path, section.format("Transpose_Naive"), foreign)
    assert code == 2 and "did you mean transpose_naive" in err, out + err
    code, out, err = _check(monkeypatch, capsys, tmp_path, section.format("some_other_kernel"), foreign)
    assert code == 0 and "skipped" in out, out + err


@pytest.mark.parametrize("rule", ["shared_wavefronts_per_load <= previous * 1e308",
                                  "dram_read_bytes >= 1e308 * previous"])
def test_a_relative_limit_that_overflows_is_bad_input(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      rule: str) -> None:
    code, out, err = _check(monkeypatch, capsys, tmp_path, f'[stage.padded]\nrules = ["{rule}"]\n')
    assert code == 2 and err.count("\n") == 1 and "the limit overflows" in err, out + err


def test_a_timing_limit_that_overflows_is_bad_input(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    histogram = GOOD_REP.parent.parent / "h200_histogram" / "profile.ncu-rep"  # has timings.json
    code, out, err = _check(monkeypatch, capsys, tmp_path, '[kernel."."]\nrules = ["duration <= 1e308 * previous"]\n',
                            histogram)
    assert code == 2 and "the limit overflows" in err, out + err
