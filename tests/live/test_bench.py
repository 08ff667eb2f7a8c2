"""live/bench.py: the one bench harness (rows, the peer loop, the table, the JSON) on the CPU, with
numpy standing in for CuPy. Every time here is a test value (the fake timer's), never a
measurement; the committed reports' bench JSON files are read back to the same dicts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from fakes import NumpyCupy

from profiler_report.cases.reduction.bench import HARNESS as REDUCTION
from profiler_report.cases.transpose.bench import HARNESS as TRANSPOSE
from profiler_report.live import bench
from profiler_report.live.bench import WALL, BenchRow, Peer, PeerUnavailable, Point

REPORTS = Path(__file__).resolve().parents[2] / "reports"


class _Row(BenchRow):
    PCT_KEY = "pct_of_ceiling"
    DIMS = ("n",)


def _check(point: Point, fn, stage) -> str:
    got, src = bench.checked_output(point.cupy, fn, point.pairs)
    return "" if np.array_equal(np.asarray(got), src * 2) else "not twice the input"


@pytest.fixture
def point(monkeypatch) -> Point:
    # Test values: every timed call takes 10 us (samples 9.9 .. 10.1).
    monkeypatch.setattr(bench, "event_times_us", lambda fn, pairs, repeats, warmup: [9.9 + 0.2 * i / (repeats - 1)
                                                                                    for i in range(repeats)])
    pairs = [(np.arange(8.0), np.zeros(8))]
    return Point(NumpyCupy(), _Row, {"n": 8}, "float64", pairs, 64, 1 << 20, _check, repeats=20, warmup=1)


def _missing(cupy, dtype):
    raise PeerUnavailable("lib not installed")


def _raises(cupy, dtype):
    def fn(src, dst):
        raise RuntimeError("CUDA error: boom")
    return fn


def test_the_peer_loop_times_the_right_ones_and_says_why_of_the_others(point):
    peers = [Peer("right", lambda cupy, dtype: (lambda src, dst: src * 2), "returns its own array"),
             Peer("writes", lambda cupy, dtype: (lambda src, dst: dst.__setitem__(slice(None), src * 2))),
             Peer("wrong", lambda cupy, dtype: (lambda src, dst: src)),
             Peer("missing", _missing), Peer("raises", _raises)]
    rows = {r.name: r for r in point.peers(peers)}
    assert rows["right"].median_us == pytest.approx(10.0) and rows["right"].note == "returns its own array"
    assert rows["right"].gbps == pytest.approx(64 / (10.0 * 1e3)) and rows["right"].resident == "L2"
    assert rows["writes"].timing == "cuda-events" and rows["writes"].median_us == pytest.approx(10.0)
    assert rows["wrong"].note == "WRONG: not twice the input" and math.isnan(rows["wrong"].gbps)
    assert (rows["missing"].timing, rows["missing"].note) == ("skipped", "lib not installed")
    assert rows["raises"].timing == "failed" and rows["raises"].note == "RuntimeError: CUDA error: boom"
    assert all(r.kind == "peer" and isinstance(r, _Row) for r in rows.values())


def test_a_wall_clock_peer_checks_and_times_itself(point):
    def make(cupy, dtype):
        return lambda p: ([20.0] * p.repeats, "wall clock") if not p.check(p, lambda s, d: s * 2, None) else (None, "")
    (row,) = point.peers([Peer("wall", make, timing=WALL)])
    assert (row.timing, row.median_us, row.note) == ("wall-clock", 20.0, "wall clock")
    (wrong,) = point.peers([Peer("wall", lambda cupy, dtype: (lambda p: (None, "WRONG: differs")), timing=WALL)])
    assert wrong.timing == "wall-clock" and wrong.note == "WRONG: differs" and math.isnan(wrong.median_us)


def test_a_wrong_kernel_is_untimed_and_says_wrong(point):
    row = point.kernel("naive", "stage", lambda src, dst: None, stage=None)  # type: ignore[arg-type]
    assert row.note.startswith("WRONG") and math.isnan(row.median_us) and row.timing == "cuda-events"


def test_the_table_marks_the_chosen_configuration_and_the_best_peer_ratio(point):
    rows = point.peers([Peer("right", lambda cupy, dtype: (lambda src, dst: src * 2))])
    stage = rows[0].but(name="vec", kind="stage", gbps=rows[0].gbps / 2)
    cfg = rows[0].but(name="vec [256]", kind="config", chosen=True)
    bench.relative_to([*rows, stage, cfg], rows[0].gbps)
    lines = bench.table([*rows, stage, cfg], "% ceiling").splitlines()
    assert "% ceiling" in lines[0] and "vec [256] (chosen)" in lines[3]
    assert "0.500x" in lines[2] and " 50.0%" in lines[2]


@pytest.mark.parametrize(("harness", "path"), [
    (TRANSPOSE, "h200/bench.json"), (TRANSPOSE, "h200/sweep.json"), (REDUCTION, "h200-reduction/bench.json")])
def test_the_committed_bench_files_read_back_to_the_same_rows(harness, path):
    doc = json.loads((REPORTS / path).read_text())
    rows = harness.rows(doc["rows"])
    assert len(rows) == len(doc["rows"]) > 10
    again = harness.as_json(rows, doc["provenance"])
    for before, after in zip(doc["rows"], again["rows"], strict=True):
        assert set(after) >= set(before), set(before) - set(after)
        assert json.dumps({k: after[k] for k in before}) == json.dumps(before)
    assert again.get("pct_label") == doc.get("pct_label")


def test_warming_up_runs_every_peer_once_untimed_and_survives_a_failure():
    import types

    ran, built = [], []

    def event_timed(cupy, dtype):
        built.append("events")
        return lambda src, dst: ran.append((src, dst))

    def missing(cupy, dtype):
        raise PeerUnavailable("not installed")

    def wall(cupy, dtype):
        built.append("wall")

        def time_it(point):
            ran.append((point.pairs, point.repeats))
            return [], "nothing timed"
        return time_it

    synced = []
    cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(
        deviceSynchronize=lambda: synced.append(1))))
    peers = [Peer("m", missing), Peer("e", event_timed), Peer("w", wall, timing=WALL)]
    bench.warm_peers(cupy, peers, "float32", "s", "d")
    assert built == ["events", "wall"] and ran == [("s", "d"), ([("s", "d")], 0)] and synced == [1]
