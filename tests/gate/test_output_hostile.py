"""Names that reach the outputs (a capture's file name, a kernel name, a ``--stage`` label) hold
control characters, raw HTML or backticks: the JUnit XML stays well-formed (characters XML 1.0
forbids are written as escapes) and Markdown never passes raw HTML (``summary`` and ``check
--format markdown``); a code span is fenced longer than the text's longest backtick run."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_support import cli
from hostile_support import KERNEL, RANGE, Raw

IMG = '"><img src=x onerror=alert(1)>'
SCRIPT = "void <script>alert(1)</script>(float *)"
RAW_HTML = re.compile(r"<\s*(img|script|details|table|b)\b", re.I)


def _hostile_capture(tmp_path: Path, name: str) -> Path:
    """The real raw export with no NVTX ranges (stages named by kernel) and two kernel names made HTML."""
    raw = Raw()
    for row in raw.rows:
        row[raw.col(RANGE)] = ""
    return raw.set("naive", KERNEL, IMG).set("smem", KERNEL, SCRIPT).write(tmp_path / name)


def test_summary_markdown_passes_no_raw_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    capture = _hostile_capture(tmp_path, "a`b``c.csv")
    code, out, err = cli(monkeypatch, capsys, "summary", capture, "--format", "markdown")
    assert code == 0, err
    assert not RAW_HTML.search(out), out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert f"```{capture}```" in out.splitlines()[0]  # the path's longest backtick run is 2


def test_check_markdown_passes_no_raw_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    capture = _hostile_capture(tmp_path, "x`y.csv")
    rules = tmp_path / "t.toml"
    rules.write_text('[kernel."."]\nrules = ["shared_excessive_wavefronts <= 0"]\n')
    code, out, err = cli(monkeypatch, capsys, "check", capture, "--thresholds", rules, "--format", "markdown",
                         "--stage", "<details><summary>x</summary>=transpose_padded",
                         "--stage", "<table>=onerror")
    assert code == 0, err
    assert not RAW_HTML.search(out), out
    assert "&lt;details&gt;" in out and "`shared_excessive_wavefronts <= 0`" in out  # code spans keep '<'
    assert f"``{capture}``" in out


@pytest.mark.parametrize(("text", "span"), [("a`b", "``a`b``"), ("``x`", "``` ``x` ```"), ("plain", "`plain`")])
def test_a_code_span_is_fenced_longer_than_its_backticks(text: str, span: str) -> None:
    from profiler_report.util.fmt import md_cell, md_code

    assert md_code(text) == span
    assert md_cell(md_code("a|b")) == "`a\\|b`" and md_cell("<b>&") == "&lt;b&gt;&amp;"


def test_junit_is_well_formed_with_control_characters_in_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    capture = _hostile_capture(tmp_path, "esc\x1b[31m\x07.csv")
    rules = tmp_path / "t.toml"
    rules.write_text('[kernel."."]\nrules = ["shared_excessive_wavefronts <= 0"]\n')
    junit = tmp_path / "check.xml"
    code, out, err = cli(monkeypatch, capsys, "check", capture, "--thresholds", rules, "--junit", junit,
                         "--stage", "bell\x07\x00label=transpose_padded", "--stage", "ok=onerror")
    assert code == 0, err
    root = ET.parse(junit).getroot()  # raises on a file that is not well-formed
    names = [tc.get("classname") for tc in root.iter("testcase")]
    assert "profiler-report.bell\\x07\\x00label" in names
    text = junit.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[31m" in text
