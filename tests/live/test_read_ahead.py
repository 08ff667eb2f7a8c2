"""A live run reads its ladder's captures in a child while ncu profiles the experiments
(live/read_ahead.py): the render then loads the tables from the result cache."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from profiler_report.capture import load, ncu_module, parsed
from profiler_report.live.read_ahead import join, read_ahead

CAPTURE = Path(__file__).parent.parent / "data" / "h200_f64_2048" / "profile.ncu-rep"


@pytest.mark.slow
@pytest.mark.skipif(not ncu_module.available() or not CAPTURE.is_file(), reason="needs ncu_report")
def test_the_child_keeps_the_tables_for_the_next_read(tmp_path, monkeypatch):
    monkeypatch.delenv("PROFILER_REPORT_NO_READ_CACHE", raising=False)
    copy = tmp_path / "profile.ncu-rep"
    shutil.copyfile(CAPTURE, copy)
    assert not parsed.has(copy)
    join(read_ahead([copy]), timeout_s=120)
    assert parsed.has(copy)


def test_nothing_to_read_starts_no_child():
    assert read_ahead([]) is None
    join(None, timeout_s=1)


def test_a_child_still_reading_past_its_time_is_stopped(monkeypatch):
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    t0 = time.monotonic()
    join(proc, timeout_s=0.5)
    assert proc.poll() is not None and time.monotonic() - t0 < 10


def test_the_entry_point_names_a_capture_it_could_not_read(tmp_path, capsys):
    bad = tmp_path / "x.ncu-rep"
    bad.write_bytes(b"not a report")
    assert load.main([str(bad)]) == 1
    assert capsys.readouterr().err.startswith("profiler-report: ")
