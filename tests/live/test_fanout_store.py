"""The resume store of `bench` and `sweep` (live/fanout.py PointStore) on files that cannot be
used: each is "not done" (the point runs again, a note names the file), never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fakes
import pytest
from click.testing import CliRunner

from profiler_report.cases.reduction.bench import ReductionRow as BenchRow
from profiler_report.live import fanout
from profiler_report.live.fanout import PointStore, SweepPoint, run_sweep
from profiler_report.live.session import git_commit
from profiler_report.model.registry import get_case

POINT = SweepPoint("reduction", "size", (("n", 1000),), "float32", repeats=29)


def _good(point: SweepPoint) -> dict[str, Any]:
    [res] = run_sweep([point], fakes.fake_point_runner)
    return {**res.record(), "rows": res.rows}


def _bad_records(point: SweepPoint) -> dict[str, Any]:
    good = _good(point)
    row = good["rows"][0]
    return {
        "a list": [], "a string": "ok", "no rows": {"status": "ok", "key": point.key()},
        "rows a string": {**good, "rows": "abc"}, "rows of strings": {**good, "rows": ["abc"]},
        "an unknown row field": {**good, "rows": [{**row, "colour": "red"}]},
        "a missing row field": {**good, "rows": [{k: v for k, v in row.items() if k != "median_us"}]},
        "a string time": {**good, "rows": [{**row, "median_us": "fast"}]},
        "where a list": {**good, "where": []}, "attempts a word": {**good, "attempts": "two"},
    }


BAD = ["a list", "a string", "no rows", "rows a string", "rows of strings", "an unknown row field",
       "a missing row field", "a string time", "where a list", "attempts a word"]


def test_the_bad_records_are_the_ones_listed(control: Path) -> None:
    assert list(_bad_records(POINT)) == BAD


@pytest.mark.parametrize("what", BAD)
def test_an_unusable_store_file_is_not_done(tmp_path: Path, control: Path, what: str) -> None:
    store = PointStore(tmp_path / "points", "abc123", row_type=BenchRow)
    store.folder.mkdir()
    store._path(POINT).write_text(json.dumps(_bad_records(POINT)[what]))
    assert store.get(POINT) is None
    [note] = store.notes
    assert str(store._path(POINT)) in note and "runs again" in note
    [res] = run_sweep([POINT], fakes.fake_point_runner, store=store)
    assert res.status == "ok" and store.get(POINT) is not None  # run again, and stored over the bad file


def test_a_good_store_file_is_reused_without_a_note(tmp_path: Path, control: Path) -> None:
    store = PointStore(tmp_path / "points", "abc123", row_type=BenchRow)
    store.folder.mkdir()
    store._path(POINT).write_text(json.dumps(_good(POINT)))
    hit = store.get(POINT)
    assert hit is not None and hit.rows == _good(POINT)["rows"] and store.notes == []


def test_bench_resumes_over_corrupt_store_files(tmp_path: Path, control: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    from profiler_report import cli

    monkeypatch.setattr(fanout, "run_point", fakes.fake_point_runner)
    fakes.install_fake_gpu(monkeypatch)
    out = tmp_path / "b.json"
    pts = get_case("reduction").sweep_points("reduction", quick=True, repeats=30)
    store = PointStore(out.with_name("b.json.points"), git_commit(Path(cli.__file__).resolve().parent.parent))
    store.folder.mkdir()
    bad = list(_bad_records(pts[0]).values())
    for i, p in enumerate(pts):
        store._path(p).write_text(json.dumps(bad[i % len(bad)]))
    res = CliRunner().invoke(cli.main, ["bench", "--case", "reduction", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert res.output.count("cannot be used") == len(pts)
    assert len(json.loads(out.read_text())["rows"]) == 2 * len(pts)
