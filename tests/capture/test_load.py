"""extract: the .ncu-rep reader and the raw-page CSV reader on real H200 captures."""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import F32

from profiler_report.analysis.stages import assign_stages
from profiler_report.analysis.summary import summarize
from profiler_report.capture.csv_common import parse_number
from profiler_report.capture.model import METRIC_COLUMNS
from profiler_report.capture.ncu_rep import read_ncu_rep
from profiler_report.capture.readahead import PendingRead, start_read
from profiler_report.capture.reader_child import PARTS, merge_parts
from profiler_report.capture.units import normalize_unit, short_kernel_name
from profiler_report.errors import ReportUnreadableError
from profiler_report.metrics import HEADLINE

STAGES = ["naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk"]
LAUNCHES = [*STAGES, "copy"]  # the tiled copy kernel (the ceiling) is profiled last


def test_ncu_rep_has_one_launch_per_stage_in_order(f32_capture):
    launches = f32_capture.launches()
    assert list(launches["nvtx_range"]) == [f"pr_{s}" for s in LAUNCHES]
    assert list(launches["kernel"]) == [f"transpose_{s}" for s in STAGES] + ["copy_tiled"]
    assert launches.loc[0, "block"] == "(32, 8, 1)"
    assert launches.loc[0, "grid"] == "(128, 128, 1)"


def test_ncu_rep_frame_is_tidy(f32_capture):
    m = f32_capture.metrics
    assert list(m.columns) == METRIC_COLUMNS
    assert not m.duplicated(["launch_id", "metric"]).any()
    assert m["value"].notna().all()
    dur = m[(m["metric"] == "gpu__time_duration.sum")]
    assert set(dur["unit"]) == {"ns"}


def test_device_attributes(f32_capture):
    assert f32_capture.device["gpu"] == "NVIDIA H200"
    assert f32_capture.device["sm_count"] == 132
    from profiler_report.capture.ncu_module import chosen

    # ncu_report's get_version() names the reader's release, not the ncu that wrote the capture.
    assert f32_capture.report_version == chosen().version


def test_the_chosen_reader_is_as_new_as_every_ncu_from_2025_1_to_2026_3():
    # The reader policy (a reader opens its own release's captures and older ones); the fixtures
    # above (ncu 2025.3.1 captures) are read by this reader in every test.
    from profiler_report.capture.ncu_module import chosen, opens

    reader = chosen()
    assert reader is not None and opens(reader.version, "2026.3.1.0"), reader
    assert all(opens(reader.version, v) for v in ("2025.1.0.0", "2025.2.1.0", "2025.3.1.0", "2026.1.0.0"))


def test_rule_results_are_read(f32_capture):
    rules = f32_capture.rules
    smem = rules[rules["launch_id"] == 1]
    assert "SharedMemoryConflicts" in set(smem["rule"])
    assert not any("@section:" in m for m in rules["message"])


def test_csv_and_ncu_rep_give_the_same_headline_numbers(f32_capture, f32_csv_capture, manifest):
    a = summarize(f32_capture, assign_stages(f32_capture, None, manifest))
    b = summarize(f32_csv_capture, assign_stages(f32_csv_capture, None, manifest))
    assert list(a["stage"]) == list(b["stage"]) == LAUNCHES
    assert list(a["role"]) == ["stage"] * len(STAGES) + ["ceiling"]
    for col in (c.name for c in HEADLINE):
        for x, y in zip(a[col], b[col], strict=True):
            if math.isnan(x):
                assert math.isnan(y), col
            else:
                # the CSV prints some ratios with 2-4 significant digits
                assert y == pytest.approx(x, rel=2e-3, abs=1e-2), col


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (274.24, "us", (274240.0, "ns")),
        (1.5, "msecond", (1.5e6, "ns")),
        (2.0, "Mbyte", (2e6, "byte")),
        (0.5, "Tbyte/s", (5e11, "byte/s")),
        (21.2, "sector/ns", (21.2e9, "sector/s")),
        (2.614, "%/Kbyte", (0.002614, "%/byte")),
        (87.5, "%", (87.5, "%")),
        (16.0, "register/thread", (16.0, "register/thread")),
        (3.0, "", (3.0, "")),
    ],
)
def test_normalize_unit(value, unit, expected):
    v, u = normalize_unit(value, unit)
    assert u == expected[1]
    assert v == pytest.approx(expected[0])


def test_parse_number():
    assert parse_number("16,252,928") == 16252928
    assert parse_number("0.5") == 0.5
    for missing in ("", "n/a", "no data", "nan", "N/A"):
        assert math.isnan(parse_number(missing))
    with pytest.raises(ValueError):
        parse_number("transpose")


def test_short_kernel_name():
    assert short_kernel_name("void transpose_naive<float>(const T1 *, T1 *, int, int)") == "transpose_naive"
    assert short_kernel_name("ns::k(int, float)") == "ns::k"


# --------------------------------------------------------------------------------------------
# Reading in child processes: split by part, started early (profiler_report.readahead)


def _child_read(*args: str) -> dict:
    """The pickle of ``python -m profiler_report.capture.reader_child F32 ARGS`` (ncu_report must not load here)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    res = subprocess.run([sys.executable, "-m", "profiler_report.capture.reader_child",
                          str(F32 / "profile.ncu-rep"), *args],
                         capture_output=True, timeout=300, env=env, check=True)
    return pickle.loads(res.stdout)


def _nan_free(x):
    """``x`` with NaN replaced by a marker, so that == compares it (NaN != NaN)."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, dict):
        return {k: _nan_free(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_nan_free(v) for v in x]
    return x


def test_parts_read_apart_and_merged_equal_one_read_of_everything():
    whole = _child_read()
    parts = [_child_read("--part", part) for part in PARTS]
    assert parts[0]["rows"] and not parts[0]["source"] and parts[1]["source"] and not parts[1]["rows"]
    merged = merge_parts(parts)
    assert _nan_free(merged) == _nan_free(whole)
    assert list(merged) == list(whole) and list(merged["files"]) == list(whole["files"])


@pytest.mark.parametrize("split", [True, False])
def test_split_and_single_child_reads_give_the_same_capture(f32_capture, split):
    path = F32 / "profile.ncu-rep"
    cap = read_ncu_rep(path, pending=PendingRead(path, split=split))
    for name in ("metrics", "rules", "source"):
        pd.testing.assert_frame_equal(getattr(cap, name), getattr(f32_capture, name))
    assert (cap.device, cap.report_version, cap.source_files) == (
        f32_capture.device, f32_capture.report_version, f32_capture.source_files)


def test_merge_parts_returns_the_first_error():
    ok = {"rows": [1], "rules": [], "source": [], "files": {}, "device": {}, "error": ""}
    assert merge_parts([ok, {"error": "no-module"}]) == {"error": "no-module"}
    assert merge_parts([ok])["rows"] == [1]


def test_start_read_starts_children_for_a_ncu_rep_only(tmp_path):
    assert start_read(F32 / "raw.csv") is None
    assert start_read(F32) is None
    assert start_read(tmp_path / "missing.ncu-rep") is None
    pending = start_read(F32 / "profile.ncu-rep")
    assert pending is not None
    pending.close()  # kills the children: nothing is left running
    assert all(proc.returncode is not None for proc in pending._procs)


def test_a_pending_read_of_another_file_is_refused():
    pending = PendingRead(F32 / "profile.ncu-rep")
    try:
        with pytest.raises(ValueError, match="pending read"):
            read_ncu_rep(F32.parent / "h200_f64_2048" / "profile.ncu-rep", pending=pending)
    finally:
        pending.close()


def test_a_read_past_its_timeout_is_unreadable_and_its_children_end():
    pending = PendingRead(F32 / "profile.ncu-rep", timeout_s=0.01)
    with pytest.raises(ReportUnreadableError, match="timed out: the ncu_report reader ran past 0 s"):
        pending.raw()
    assert all(proc.returncode is not None for proc in pending._procs)


def test_a_hanging_reader_is_stopped_and_the_error_says_it_timed_out(monkeypatch):
    from profiler_report.capture import readahead

    # A child that never answers (ncu_report stuck on a file): stopped at the injected limit.
    monkeypatch.setattr(readahead, "child_argv", lambda path, part: [sys.executable, "-c",
                                                                     "import time; time.sleep(60)"])
    t0 = time.monotonic()
    pending = PendingRead(F32 / "profile.ncu-rep", timeout_s=0.5)
    with pytest.raises(ReportUnreadableError) as exc:
        pending.raw()
    assert time.monotonic() - t0 < 10
    assert "timed out" in exc.value.message and "9.8 MB capture" in exc.value.message
    assert "complete .ncu-rep" in exc.value.hint  # not the unrelated "pass a report written by ncu"
    assert all(proc.returncode is not None for proc in pending._procs)


def test_the_read_timeout_is_bounded_by_the_capture_size():
    from profiler_report.capture.readahead import READ_BASE_S, read_timeout_s

    small = read_timeout_s(F32.parent / "bad" / "truncated.ncu-rep")  # 64 KB
    big = read_timeout_s(F32 / "profile.ncu-rep")  # 9.8 MB: read in 1.5-3 s
    assert READ_BASE_S <= small < big < 600
    pending = PendingRead(F32 / "profile.ncu-rep")  # the default limit is the size-bound one
    pending.close()
    assert pending.timeout_s == big


def test_a_child_that_fails_gives_its_status_and_last_line(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'first line' >&2\necho 'ncu_report: bad section' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    with pytest.raises(ReportUnreadableError, match="exited with status 3 .* ncu_report: bad section"):
        read_ncu_rep(F32 / "profile.ncu-rep")
