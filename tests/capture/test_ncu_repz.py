"""An ``.ncu-repz`` (ncu's zstd-compressed report) reads as the ``.ncu-rep`` it was made from; a
file that only starts like one is refused with one line, never a crash."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from profiler_report.capture.load import read_capture
from profiler_report.capture.readahead import COMPRESSED, ZSTD_MAGIC, ncu_rep_format
from profiler_report.errors import ReportUnreadableError

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"


def test_a_compressed_report_reads_as_its_original(tmp_path):
    zstd = shutil.which("zstd")
    if zstd is None:
        pytest.fail("the zstd command (Debian's zstd package) is needed to make an .ncu-repz here")
    packed = tmp_path / "profile.ncu-repz"
    subprocess.run([zstd, "-q", "-3", str(SRC), "-o", str(packed)], check=True)
    assert ncu_rep_format(packed) == COMPRESSED and packed.stat().st_size < SRC.stat().st_size / 2
    a, b = read_capture(SRC), read_capture(packed)
    assert a.metrics.equals(b.metrics) and a.source.equals(b.source) and a.source_files == b.source_files
    assert a.device == b.device


def test_a_file_that_only_starts_like_a_compressed_report_is_refused(tmp_path):
    bad = tmp_path / "bad.ncu-repz"
    bad.write_bytes(ZSTD_MAGIC + b"\x00" * 4096)
    with pytest.raises(ReportUnreadableError) as info:
        read_capture(bad)
    assert str(bad) in info.value.message and "\n" not in info.value.message
