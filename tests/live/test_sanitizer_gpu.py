"""GPU tests of the compute-sanitizer gate (marker ``gpu``; skipped without a GPU, and without
compute-sanitizer, run on the device): the two deliberately broken transposes
(tests/data/sanitizer/broken_case) are caught by the tool that should catch them, every real
stage of the transpose and the reduction is clean, and a live run states it.

With $SANITIZER_LOGS_OUT set (scripts/device/sanitizer.sh sets it), each tool's raw output is
copied there under the names the CPU tests read from tests/data/sanitizer/.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import DATA

from profiler_report.live import sanitizer as san
from profiler_report.model.registry import get_case

pytestmark = pytest.mark.gpu

BROKEN = DATA / "sanitizer" / "broken_case"
EXE = san.find_sanitizer()
needs_tool = pytest.mark.skipif(EXE is None, reason=f"needs compute-sanitizer ({san.NOT_FOUND})")


def _keep_logs(folder: Path, prefix: str) -> None:
    out = os.environ.get("SANITIZER_LOGS_OUT")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    for tool in san.TOOLS:
        log = folder / f"sanitizer-{tool}.log"
        if log.is_file():
            shutil.copyfile(log, Path(out) / f"{prefix}-{tool}.log")


def _sanitize(case_ref: str, folder: Path, dtype: str = "float32") -> dict[str, dict]:
    case = get_case(case_ref)
    size = case.sanitize_size()
    ids = [*case.manifest.stage_ids(), case.manifest.ceiling.id]
    assert EXE is not None
    doc = san.sanitize(san.SanitizeJob(EXE, case.ref, size, dtype, ids, 600), case.size_text(size), folder)
    (folder / "sanitizer.json").write_text(json.dumps(doc, indent=1))
    assert [t["status"] for t in doc["tools"]] == ["ran"] * len(san.TOOLS), doc["tools"]
    return {r["stage"]: r for r in doc["stages"]}


@needs_tool
def test_the_two_classic_barrier_bugs_are_caught_and_the_correct_kernel_is_clean(tmp_path):
    recs = _sanitize(str(BROKEN), tmp_path)
    _keep_logs(tmp_path, "broken")
    assert not recs["nosync"]["correct"]
    assert recs["nosync"]["racecheck"] != "clean", recs["nosync"]  # racecheck names the missing barrier
    assert not recs["barrier_in_bounds"]["correct"]
    # On the H200 (sm_90, 2025.3.1) synccheck reports nothing for the barrier inside the bounds
    # check (sm_70+ lets a barrier complete without the exited threads); racecheck reports the
    # shared-memory race it leaves (measured 2026-12-01: tests/data/sanitizer/broken-*.log).
    assert recs["barrier_in_bounds"]["racecheck"] != "clean", recs["barrier_in_bounds"]
    for sid in ("padded", "copy"):
        assert recs[sid]["correct"] and recs[sid]["checked"], recs[sid]
        assert all(recs[sid][t] == "clean" for t in san.TOOLS), recs[sid]


@needs_tool
def test_every_reduction_stage_is_clean_multi_launch_steps_included(tmp_path):
    recs = _sanitize("reduction", tmp_path)
    _keep_logs(tmp_path, "reduction")
    bad = {s: r["first"] for s, r in recs.items() if not (r["correct"] and r["checked"])}
    assert not bad, bad


@needs_tool
def test_a_live_run_sanitizes_every_transpose_stage_first_and_states_it(tmp_path):
    from profiler_report.live.config import RunConfig
    from profiler_report.live.session import live_run
    from profiler_report.report.build import render_timings_only

    out = tmp_path / "r"
    live_run(RunConfig(size={"rows": 1024, "cols": 1024}, counters=False, sanitize=True), out,
             render=render_timings_only)
    _keep_logs(out, "transpose")
    doc = json.loads((out / "sanitizer.json").read_text())
    assert doc["size_text"] == "67x133" and [t["tool"] for t in doc["tools"]] == list(san.TOOLS)
    bad = {r["stage"]: r["first"] for r in doc["stages"] if not (r["correct"] and r["checked"])}
    assert not bad, bad
    assert [r["stage"] for r in doc["stages"]] == [*get_case("transpose").manifest.stage_ids(), "copy"]
    prov = json.loads((out / "provenance.json").read_text())["sanitizer"]
    assert prov.endswith(f"all {len(doc['stages'])} stages clean"), prov
    html = (out / "index.html").read_text()
    assert prov in html and "memcheck clean; racecheck clean; synccheck clean (at 67x133 float32)" in html
    assert json.loads((out / "summary.json").read_text())["sanitizer"]["result"] == "clean"
