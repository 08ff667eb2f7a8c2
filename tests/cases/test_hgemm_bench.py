"""The bf16 GEMM's benchmark rows (CPU; checks and times replaced by test values, not
measurements): every entry is checked first, the right ones are timed together in turns, a wrong
one is WRONG and never timed, and a timing that raises falls back to timing each entry alone."""

from __future__ import annotations

from profiler_report.cases.hgemm import bench
from profiler_report.model.registry import get_case

CASE = get_case("hgemm")
SIZE = {"m": 64, "n": 64, "k": 64}


def _t():
    return bench._Timing(CASE, [(None, None)], None, SIZE, 20)


def test_right_entries_are_timed_together_and_a_wrong_one_is_not(monkeypatch):
    monkeypatch.setattr(bench, "import_cupy", lambda: None)
    monkeypatch.setattr(bench, "check_output", lambda cupy, case, fn, pair, ref: "3 wrong" if fn == "bad" else "")
    together = []

    def interleaved(entries, repeats, warmup):
        together.append([fn for fn, _ in entries])
        return [[100.0 + i] * repeats for i in range(len(entries))]

    monkeypatch.setattr(bench, "interleaved_times_us", interleaved)
    rows = bench._timed_all(_t(), [("a", "ceiling", "fa", ""), ("b", "stage", "bad", ""), ("c", "peer", "fc", "n")])
    assert together == [["fa", "fc"]]
    assert [r.name for r in rows] == ["a", "b", "c"] and rows[0].median_us == 100.0 and rows[2].median_us == 101.0
    assert rows[1].note == "WRONG: 3 wrong" and rows[1].median_us != rows[1].median_us and rows[2].note == "n"


def test_a_timing_that_raises_times_each_entry_alone(monkeypatch):
    monkeypatch.setattr(bench, "import_cupy", lambda: None)
    monkeypatch.setattr(bench, "check_output", lambda *a: "")

    def interleaved(entries, repeats, warmup):
        raise RuntimeError("a peer failed mid-run")

    def alone(fn, pairs, repeats, warmup):
        if fn == "fb":
            raise ValueError("still failing")
        return [50.0] * repeats

    monkeypatch.setattr(bench, "interleaved_times_us", interleaved)
    monkeypatch.setattr(bench, "event_times_us", alone)
    rows = bench._timed_all(_t(), [("a", "ceiling", "fa", ""), ("b", "peer", "fb", "")])
    assert rows[0].median_us == 50.0 and rows[0].timing == "cuda-events"
    assert rows[1].timing == "failed" and rows[1].note.startswith("ValueError: still failing")
