"""The reduction's recorded H200 capture (tests/data/h200_reduction_f32_2p26, n = 2^26 float32)
and its committed live report (reports/h200-reduction): the ladder's real values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_report.analysis.run import load_run

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "h200_reduction_f32_2p26" / "profile.ncu-rep"
REPORT = ROOT / "reports" / "h200-reduction"
HARRIS = ["interleaved_divergent", "interleaved_strided", "sequential", "first_add", "warp_shuffle", "unrolled",
          "grid_stride", "vec4"]


@pytest.fixture(scope="module")
def summary():
    run = load_run(FIXTURE)
    assert run.case is not None and run.case.name == "reduction"
    return run.analysis.summary.set_index("stage")


def test_capture_holds_every_stage_and_the_ceiling(summary):
    assert list(summary.index) == [*HARRIS, "one_pass", "one_pass_deep", "read_ceiling"]
    assert summary.loc["read_ceiling", "role"] == "ceiling"


def test_conflicts_appear_at_the_strided_stage_and_vanish_at_sequential(summary):
    excessive = summary["shared_excessive_wavefronts"]
    assert excessive["interleaved_strided"] > 0
    assert (excessive.drop("interleaved_strided") == 0).all()
    assert (summary["shared_excessive_source"] == "ncu").all()


def test_profiled_durations_and_instructions_fall_along_harris_ladder(summary):
    dur, inst = summary.loc[HARRIS, "duration_us"], summary.loc[HARRIS, "instructions_executed"]
    assert dur.is_monotonic_decreasing and dur.is_unique
    assert inst.is_monotonic_decreasing and inst.is_unique
    # the first pass of the 16-byte stages reads at the read ceiling's speed
    tail = summary.loc[["vec4", "one_pass", "one_pass_deep"], "duration_us"]
    assert (tail / summary.loc["read_ceiling", "duration_us"]).between(0.97, 1.03).all()


def test_vector_loads_move_sixteen_sectors_per_request(summary):
    assert summary.loc["grid_stride", "global_load_sectors_per_request"] == 4
    assert summary.loc["vec4", "global_load_sectors_per_request"] == 16


def test_default_thresholds_gate_the_fixture():
    res = subprocess.run([sys.executable, "-m", "profiler_report", "check", str(FIXTURE), "--case", "reduction",
                          "--missing", "warn"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 failed" in res.stdout


def test_committed_report_validated_every_stage_and_reached_the_ceiling():
    validation = json.loads((REPORT / "validation.json").read_text())
    assert validation and all(v["correct"] for v in validation)
    timings = {t["name"]: t for t in json.loads((REPORT / "timings.json").read_text())["timings"]}
    best = max(timings[s]["gbps"] for s in (*HARRIS, "one_pass", "one_pass_deep"))
    assert best >= 0.9 * timings["read_ceiling"]["gbps"]


def test_int32_stages_were_exact_in_the_bench_sweep():
    rows = json.loads((REPORT / "bench-sweep.json").read_text())["rows"]
    ints = [r for r in rows if r["dtype"] == "int32" and r["kind"] in ("stage", "config")]
    assert len(ints) > 50
    # a stage whose int32 sum differs from the host's is recorded "WRONG" with no time
    assert not [r["name"] for r in ints if r["note"].startswith("WRONG") or r["gbps"] != r["gbps"]]
