"""A .ncu-rep read once is loaded from the result cache the next time: the same tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from profiler_report.capture import ncu_module, parsed
from profiler_report.capture.load import read_capture
from profiler_report.capture.readahead import start_read

CAPTURE = Path(__file__).parent.parent / "data" / "h200_f64_2048" / "profile.ncu-rep"
pytestmark = pytest.mark.skipif(not ncu_module.available() or not CAPTURE.is_file(), reason="needs ncu_report")


@pytest.fixture(autouse=True)
def _read_cache_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROFILER_REPORT_NO_READ_CACHE", raising=False)


def test_it_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROFILER_REPORT_NO_READ_CACHE", "1")
    copy = tmp_path / "a.ncu-rep"
    shutil.copyfile(CAPTURE, copy)
    read_capture(copy)
    assert not parsed.has(copy)


def test_a_second_read_comes_from_the_cache_with_the_same_tables(tmp_path: Path) -> None:
    copy = tmp_path / "a.ncu-rep"
    shutil.copyfile(CAPTURE, copy)
    assert not parsed.has(copy)
    first = read_capture(copy)
    assert parsed.has(copy) and start_read(copy) is None  # no reader child to start
    moved = tmp_path / "b.ncu-rep"
    shutil.copyfile(copy, moved)  # same content elsewhere: the same entry, named by its own path
    again = read_capture(moved)
    assert again.path == moved
    pd.testing.assert_frame_equal(first.metrics, again.metrics)
    pd.testing.assert_frame_equal(first.source, again.source)
    assert first.device == again.device and first.notes == again.notes


def test_changed_bytes_are_read_again(tmp_path: Path) -> None:
    copy = tmp_path / "a.ncu-rep"
    shutil.copyfile(CAPTURE, copy)
    read_capture(copy)
    data = bytearray(copy.read_bytes())
    data[-1] ^= 0xFF
    copy.write_bytes(bytes(data))
    assert not parsed.has(copy)
