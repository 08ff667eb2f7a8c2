"""A ``.ncu-rep`` with hundreds of MB of zeros after its blocks (capture/readahead.py
corrupt_tail): refused at once, one line, exit 2, never minutes of ncu_report within a budget
that grows with the file's size. The files are sparse: they take no disk space."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import F32

from profiler_report.capture.load import read_capture
from profiler_report.capture.readahead import corrupt_tail, read_timeout_s
from profiler_report.errors import ReportUnreadableError

REAL = F32 / "profile.ncu-rep"
ZEROS = 400 * 10**6


def _with_zeros(tmp_path: Path, keep: int | None) -> Path:
    """The first ``keep`` bytes of the real capture (all of it for None), then zeros to 400 MB."""
    out = tmp_path / "zeros.ncu-rep"
    data = REAL.read_bytes()
    out.write_bytes(data if keep is None else data[:keep])
    with out.open("r+b") as fh:
        fh.truncate(ZEROS)
    return out


@pytest.mark.parametrize("keep", [10, None], ids=["header", "whole-capture"])
def test_zeros_after_the_blocks_are_refused_at_once(tmp_path: Path, keep: int | None) -> None:
    path = _with_zeros(tmp_path, keep)
    assert read_timeout_s(path) > 800  # what the size-based budget alone would have allowed
    t0 = time.monotonic()
    with pytest.raises(ReportUnreadableError) as exc:
        read_capture(path)
    assert time.monotonic() - t0 < 5
    assert exc.value.exit_code == 2 and "is corrupt" in exc.value.message and "hold no block" in exc.value.message


def test_every_real_capture_walks_whole() -> None:
    data = F32.parent
    captures = [p for p in sorted(data.glob("*/*.ncu-rep")) if p.parent.name != "bad"]
    assert len(captures) >= 6
    assert [corrupt_tail(p) for p in captures] == [""] * len(captures)
