"""report: the sidecar files a live run writes beside a capture are checked before they are used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profiler_report.capture.sidecars import read_sidecars
from profiler_report.errors import InputError

H200 = Path(__file__).resolve().parents[2] / "reports" / "h200"
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
    ("sweep.json", lambda d: _first(d["rows"], "stage").update(resident="MOON"), r"resident \(L2 or DRAM\)"),
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


def _with_sanitizer(folder: Path, edit=None) -> None:
    shutil.copyfile(H200 / "sanitizer.json", folder / "sanitizer.json")
    if edit is not None:
        _edit(folder, "sanitizer.json", edit)


def test_the_committed_sanitizer_results_pass(folder):
    _with_sanitizer(folder)
    assert read_sidecars(folder).sanitizer["stages"]


@pytest.mark.parametrize("edit", [
    lambda d: d["stages"][0].update(memcheck=5),  # a tool's result that is not text
    lambda d: d["stages"][0].pop("memcheck"),  # a stage without a tool's result
    lambda d: d["stages"].append(dict(d["stages"][0])),  # a stage twice
    lambda d: d["tools"].append({"tool": "correct", "status": "ran"}),  # a tool named after a stage key
    lambda d: d.update(tools=[]),  # no tool ran: nothing may be called clean
    lambda d: d.update(stages=[]),
    lambda d: d.update(version=[1]),
])
def test_sanitizer_results_the_page_cannot_state_are_one_clear_error(folder, edit):
    # Each crashed the page's template (exit 70) or had it say "clean" of what never ran.
    _with_sanitizer(folder, edit)
    with pytest.raises(InputError, match="is not a sanitizer.json written by profiler-report"):
        read_sidecars(folder)


def test_nan_in_sanitizer_results_is_one_clear_error(folder):
    # The summary writes sanitizer.json's values on as strict JSON: NaN was exit 70 there.
    _with_sanitizer(folder)
    text = (folder / "sanitizer.json").read_text().replace('"seconds": ', '"seconds": NaN, "was": ', 1)
    (folder / "sanitizer.json").write_text(text)
    with pytest.raises(InputError, match="sanitizer.json: NaN is not a number a live run writes here"):
        read_sidecars(folder)


def test_sanitizer_results_that_contradict_the_run_are_one_clear_error(folder):
    _with_sanitizer(folder, lambda d: d["stages"][1].update(correct=False, first="racecheck: a race"))
    with pytest.raises(InputError, match="sanitizer.json marks smem wrong, but timings.json times it"):
        read_sidecars(folder)
    _with_sanitizer(folder, lambda d: d.update(dtype="float64"))
    with pytest.raises(InputError, match="sanitizer.json is of dtype float64, but provenance.json says"):
        read_sidecars(folder)


def test_a_timing_too_large_for_a_float_is_one_clear_error(folder):
    # math.isfinite(10**400) raises OverflowError: it was exit 70.
    _edit(folder, "timings.json", lambda d: d["timings"][3].update(median_us=10**400, p90_us=10**401))
    with pytest.raises(InputError, match=r"timings.json: entry 3 lacks or mistypes median_us"):
        read_sidecars(folder)
    shutil.copyfile(H200 / "timings.json", folder / "timings.json")
    _edit(folder, "bench.json", lambda d: d["rows"][0].update(median_us=10**400))
    with pytest.raises(InputError, match=r"bench.json: entry 0 lacks or mistypes median_us"):
        read_sidecars(folder)


@pytest.mark.parametrize(("name", "edit", "match"), [
    ("timings.json", lambda d: d["timings"].append(dict(d["timings"][2])), r"timings.json: entry 13 repeats 'smem'"),
    ("validation.json", lambda d: d.append(dict(d[0], correct=False)), r"validation.json: entry 12 repeats \('naive'"),
    ("validation.json", lambda d: d[2].update(correct=False, message=5), "entry 2 mistypes message"),
])
def test_a_repeated_or_mistyped_entry_is_one_clear_error(folder, name, edit, match):
    # The last of two entries silently won (in the figures and in check); a number as a message was exit 70.
    _edit(folder, name, edit)
    with pytest.raises(InputError, match=match):
        read_sidecars(folder)


@pytest.mark.parametrize(("edit", "match"), [
    (lambda d: [r.update(rows=4096) for r in d["rows"]], r"bench.json: entry 0 \(memcpy\) has .*'rows': 4096"),
    (lambda d: [r.update(dtype="float64") for r in d["rows"]], r"bench.json: entry 0 \(memcpy\) has \{'dtype'"),
    (lambda d: d["provenance"].update(gpu="NVIDIA A100-SXM4-80GB"), "bench.json ran on NVIDIA A100-SXM4-80GB"),
])
def test_peers_of_another_size_dtype_or_gpu_than_the_run_are_one_clear_error(folder, edit, match):
    # They rendered as "same process, same size and dtype".
    _edit(folder, "bench.json", edit)
    with pytest.raises(InputError, match=match):
        read_sidecars(folder)


def test_a_sweep_from_another_gpu_is_one_clear_error(folder):
    # It rendered as this GPU's sweep, without a word.
    _edit(folder, "sweep.json", lambda d: d["provenance"].update(gpu="NVIDIA A100-SXM4-80GB"))
    with pytest.raises(InputError, match="sweep.json ran on NVIDIA A100-SXM4-80GB, but provenance.json says the run"):
        read_sidecars(folder)
    shutil.copyfile(H200 / "sweep.json", folder / "sweep.json")
    _edit(folder, "sweep.json", lambda d: d["rows"][5].update(gpu_name="NVIDIA A100-SXM4-80GB"))
    with pytest.raises(InputError, match="sweep.json ran on NVIDIA A100"):
        read_sidecars(folder)
