"""Shared by the gate's tests (gate/, cli/test_check.py, analysis/test_compare.py): the fixture
captures, the in-process CLI, a few assertions. The loaded runs (``good_run``, ``regressed_run``,
``default_thresholds``) are session-scoped fixtures in conftest.py: each capture is read once."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import read_once

from profiler_report.analysis import run as run_module
from profiler_report.capture import readahead
from profiler_report.cli import entry
from profiler_report.errors import ThresholdsError
from profiler_report.gate.rules import Result

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
BAD = DATA / "thresholds"
GOOD_REP = DATA / "h200_f32_4096" / "profile.ncu-rep"
REGRESSED_REP = DATA / "h200_f32_4096_regressed" / "profile.ncu-rep"
F64_REP = DATA / "h200_f64_2048" / "profile.ncu-rep"


def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: Any,
        cwd: Path = REPO) -> tuple[int, str, str]:
    """Run the console entry in-process: (exit code, stdout, stderr). Each capture file is read
    once a session (:func:`conftest.read_once`); render's read-ahead is left out (nothing to overlap)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["profiler-report", *map(str, args)])
    monkeypatch.setattr(run_module, "read_capture", read_once)
    monkeypatch.setattr(readahead, "start_read", lambda path, timeout_s=None: None)
    with pytest.raises(SystemExit) as exc:
        entry()
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@contextlib.contextmanager
def refused(fragment: str) -> Iterator[None]:
    """Expect a ThresholdsError whose one-line form (message and fix) matches ``fragment``."""
    with pytest.raises(ThresholdsError) as exc:
        yield
    line = exc.value.one_line()
    assert re.search(fragment, line), line
    assert "\n" not in line


def by(results: list[Result], stage: str, rule: str) -> Result:
    """The one result of ``rule`` on ``stage``."""
    hits = [r for r in results if r.stage == stage and r.rule == rule]
    assert len(hits) == 1, (stage, rule, [(r.stage, r.rule) for r in results])
    return hits[0]
