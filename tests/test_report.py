"""report: the sidecar files a live run writes beside a capture are checked before they are used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profiler_report.capture.sidecars import read_sidecars
from profiler_report.errors import InputError

H200 = Path(__file__).resolve().parent.parent / "reports" / "h200"
SIDECARS = ("timings.json", "validation.json", "provenance.json", "bench.json", "sweep.json")


@pytest.fixture
def folder(tmp_path):
    for name in SIDECARS:
        shutil.copyfile(H200 / name, tmp_path / name)
    return tmp_path


def _edit(folder: Path, name: str, edit) -> None:
    doc = json.loads((folder / name).read_text())
    edit(doc)
    (folder / name).write_text(json.dumps(doc))


def _first(rows: list[dict], kind: str) -> dict:
    return next(r for r in rows if r["kind"] == kind)


def test_the_committed_live_run_passes(folder):
    side = read_sidecars(folder)
    assert side.sweep and any(r["kind"] == "shape" for r in side.sweep)
    assert side.bench and side.timings and side.validation and side.provenance


@pytest.mark.parametrize(("name", "edit", "key"), [
    ("sweep.json", lambda d: _first(d["rows"], "shape").update(gbps="fast"), "gbps"),
    ("sweep.json", lambda d: _first(d["rows"], "shape").update(chosen="no"), "chosen"),
    ("sweep.json", lambda d: _first(d["rows"], "shape").pop("p10_us"), "p10_us"),
    ("sweep.json", lambda d: _first(d["rows"], "shape").update(pct_of_memcpy="97"), "pct_of_memcpy"),
    ("sweep.json", lambda d: _first(d["rows"], "shape").update(threads="many"), "threads"),
    ("sweep.json", lambda d: _first(d["rows"], "shape").update(gbps=float("inf")), "gbps"),
    ("bench.json", lambda d: _first(d["rows"], "peer").update(note=5), "note"),
    ("bench.json", lambda d: _first(d["rows"], "peer").update(gbps="x"), "gbps"),
    ("timings.json", lambda d: d["timings"][0].update(median_us=-1.0), "median_us"),
    # Text is never null (only a timed number may be), a shape's timing never null, and a sweep
    # row says where it was resident (the sweep table's L2 / DRAM label).
    ("bench.json", lambda d: _first(d["rows"], "peer").update(note=None), "note"),
    ("sweep.json", lambda d: _first(d["rows"], "stage").update(config=None), "config"),
    ("sweep.json", lambda d: _first(d["rows"], "shape").update(p10_us=None), "p10_us"),
    ("sweep.json", lambda d: _first(d["rows"], "stage").pop("resident"), "resident"),
    # A timing that contradicts itself, and a NaN in timings.json (a live run times only what validated).
    ("sweep.json", lambda d: _first(d["rows"], "stage").update(p10_us=1e6), "p10_us <= median_us <= p90_us"),
    ("bench.json", lambda d: _first(d["rows"], "peer").update(p90_us=0.0), "p10_us <= median_us <= p90_us"),
    ("timings.json", lambda d: d["timings"][0].update(p10_us=2e6, p90_us=1.0), "p10_us <= median_us"),
    ("timings.json", lambda d: d["timings"][0].update(median_us=float("nan")), "not NaN"),
    ("timings.json", lambda d: d["timings"][0].update(gbps=0.0), "above 0"),
])
def test_a_mistyped_field_is_one_clear_error(folder, name, edit, key):
    _edit(folder, name, edit)
    with pytest.raises(InputError, match=rf"{name}: entry \d+ lacks or mistypes .*{key}"):
        read_sidecars(folder)


@pytest.mark.parametrize("edit", [lambda t: t.update(dtype="float16"), lambda t: t.update(rows=17)])
def test_timings_of_another_dtype_or_size_than_the_run_are_one_clear_error(folder, edit):
    # They rendered as this run's figures, without a word.
    _edit(folder, "timings.json", lambda d: [edit(t) for t in d["timings"]])
    with pytest.raises(InputError, match=r"timings.json: entry 0 \(memcpy\) has .*but provenance.json says the run"):
        read_sidecars(folder)


def test_a_sidecar_nested_too_deeply_is_one_clear_error(folder):
    # Python's JSON decoder gives up with a RecursionError (it was an internal error, exit 70).
    (folder / "provenance.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="provenance.json: nested too deeply to parse"):
        read_sidecars(folder)


def test_an_untimed_entry_is_not_an_error(folder):
    # A peer that was skipped or wrong is written with NaN (or null) times: the report shows it as such.
    _edit(folder, "bench.json", lambda d: _first(d["rows"], "peer").update(gbps=None, median_us=float("nan")))
    assert read_sidecars(folder).bench
