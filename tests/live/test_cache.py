"""The run's reuse of results (live/cache.py keys, live/reuse.py phases) on CPU, with a recorded
H200 capture standing in for ncu's output: a key change is a miss, a corrupt entry is a miss with
a note, and a hit renders the same numbers."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from profiler_report.analysis.run import load_run
from profiler_report.capture.parts import read_parts
from profiler_report.live import reuse
from profiler_report.live.cache import RunCache, stage_key, stage_source_hash
from profiler_report.live.config import RunConfig
from profiler_report.model.manifest import Stage
from profiler_report.model.registry import get_case
from profiler_report.util.result_cache import ResultCache

RECORDED = Path(__file__).parent.parent / "data" / "h200_f32_4096" / "raw.csv"
IN_CAPTURE = ["naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk", "copy"]
CASE = get_case("transpose")
MACHINE = {"gpu": "NVIDIA H200", "driver": "580.159.04", "cuda_runtime": "13.0"}


def _cache(root: Path, fresh: bool = False) -> RunCache:
    return RunCache(ResultCache(root, read=not fresh), MACHINE, "abc123", "case-code", fresh=fresh)


def _profiled() -> list[Stage]:
    return [CASE.manifest.stage(s) for s in IN_CAPTURE]


class Ncu:
    """Stands in for the one ncu process: writes the recorded capture, remembers what it was asked."""

    def __init__(self, out: Path) -> None:
        self.out, self.calls = out, []

    def __call__(self, todo: list[Stage]) -> None:
        self.calls.append([s.id for s in todo])
        shutil.copyfile(RECORDED, self.out / "profile.ncu-rep")


def _summary(folder: Path) -> pd.DataFrame:
    parts = read_parts(folder)
    if parts is None:
        run = load_run(folder / "profile.ncu-rep", case=CASE)
    else:
        run = load_run([p for p, _ in parts], case=CASE, keep=[s for _, s in parts])
    return run.summary.set_index("stage").sort_index()


def _profile(rc: RunCache, out: Path, stages: list[Stage]) -> Ncu:
    out.mkdir(parents=True, exist_ok=True)
    ncu = Ncu(out)
    reuse.profile(rc, RunConfig(size={"rows": 4096, "cols": 4096}), CASE, stages, "true", out, ncu)
    return ncu


def test_stage_source_hash_follows_its_own_block_and_the_shared_text() -> None:
    src = CASE.manifest.source_text()
    naive, smem = CASE.manifest.stage("naive"), CASE.manifest.stage("smem")
    edited = re.sub(r"^// end stage", "// a comment\n// end stage", src, count=1, flags=re.M)  # the copy's block
    assert stage_source_hash(edited, naive) == stage_source_hash(src, naive)
    assert stage_source_hash(edited, CASE.manifest.ceiling) != stage_source_hash(src, CASE.manifest.ceiling)
    shared = src.replace("// stage: copy", "#define SHARED_HELPER 1\n// stage: copy", 1)
    assert stage_source_hash(shared, smem) != stage_source_hash(src, smem)


def test_every_dependency_is_in_the_key() -> None:
    st, size = CASE.manifest.stage("vec_tuned"), {"rows": 4096, "cols": 4096}
    base = stage_key(CASE, st, size, "float32", MACHINE, "code")
    assert stage_key(CASE, st, size, "float32", MACHINE, "code") == base
    changed = [stage_key(CASE, replace(st, targs=("32", "16", "512")), size, "float32", MACHINE, "code"),
               stage_key(CASE, st, {"rows": 4096, "cols": 4097}, "float32", MACHINE, "code"),
               stage_key(CASE, st, size, "float64", MACHINE, "code"),
               stage_key(CASE, st, size, "float32", {**MACHINE, "driver": "999"}, "code"),
               stage_key(CASE, st, size, "float32", MACHINE, "other code"),
               stage_key(CASE, st, size, "float32", MACHINE, "code", ncu="2025.3.1")]
    assert all(k != base for k in changed)
    assert base["launch_config"].startswith("grid=")


def test_a_hit_reuses_the_capture_and_renders_the_same_numbers(tmp_path: Path) -> None:
    cold = _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    assert cold.calls == [IN_CAPTURE]
    rc = _cache(tmp_path / "cache")
    warm = _profile(rc, tmp_path / "warm", _profiled())
    assert warm.calls == []  # nothing profiled again
    assert {r.stage for r in rc.reused} == set(IN_CAPTURE) and all(r.commit == "abc123" for r in rc.reused)
    assert read_parts(tmp_path / "warm") is None  # one capture holds them all: as a cold run
    pd.testing.assert_frame_equal(_summary(tmp_path / "cold"), _summary(tmp_path / "warm"))


def test_a_key_change_is_a_miss_and_only_that_stage_is_profiled(tmp_path: Path) -> None:
    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    stages = _profiled()
    stages[2] = replace(stages[2], change=stages[2].change + " ")  # not in the key: still a hit
    assert _profile(_cache(tmp_path / "cache"), tmp_path / "same", stages).calls == []
    rc = _cache(tmp_path / "cache")
    rc.case_code = "edited case code"  # the code hash is in every key: every stage misses
    assert _profile(rc, tmp_path / "code", stages).calls == [IN_CAPTURE]


def test_one_edited_stage_is_profiled_alone_and_the_ladder_keeps_its_order(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    real = reuse.stage_key

    def edited(case, stage, *args, **kw):  # the padded stage's kernel source changed
        key = real(case, stage, *args, **kw)
        return {**key, "source": key["source"] + "-edited"} if stage.id == "padded" else key

    monkeypatch.setattr(reuse, "stage_key", edited)
    ncu = _profile(_cache(tmp_path / "cache"), tmp_path / "edit", _profiled())
    assert ncu.calls == [["padded"]]
    parts = read_parts(tmp_path / "edit")
    assert parts is not None and [s for _, s in parts] == [["naive", "smem"], ["padded"], IN_CAPTURE[3:]]
    assert [p.name for p, _ in parts][1] == "profile.ncu-rep"
    run = load_run([p for p, _ in parts], case=CASE, keep=[s for _, s in parts])
    assert run.stages() == IN_CAPTURE  # ladder order, each stage once
    pd.testing.assert_frame_equal(_summary(tmp_path / "cold"), _summary(tmp_path / "edit"), check_like=True)


def test_a_corrupt_capture_is_a_miss_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    blob = next((tmp_path / "cache" / "capture").glob("*/profile.ncu-rep"))
    blob.write_bytes(blob.read_bytes()[:-10] + b"0123456789")
    rc = _cache(tmp_path / "cache")
    ncu = _profile(rc, tmp_path / "again", _profiled())
    assert ncu.calls == [IN_CAPTURE] and rc.reused == []
    assert any("SHA-256" in n for n in rc.notes()) and "recomputed" in capsys.readouterr().err
    pd.testing.assert_frame_equal(_summary(tmp_path / "cold"), _summary(tmp_path / "again"))


def test_fresh_profiles_everything_again(tmp_path: Path) -> None:
    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    assert _profile(_cache(tmp_path / "cache", fresh=True), tmp_path / "fresh", _profiled()).calls == [IN_CAPTURE]


def test_validation_is_reused_and_a_changed_stage_validated_again(tmp_path: Path) -> None:
    from profiler_report.live.kernels import Validation

    cfg, size, st = RunConfig(), {"rows": 64, "cols": 64}, CASE.manifest.stage("smem")
    runs = []

    def run() -> Validation:
        runs.append(1)
        return Validation("smem", dict(size), "float32", False, 3, (1, 2), "stage smem is wrong")

    first = reuse.validate(_cache(tmp_path), cfg, CASE, st, size, run)
    again = reuse.validate(_cache(tmp_path), cfg, CASE, st, size, run)
    assert runs == [1] and again == first  # a wrong stage stays wrong when reused
    reuse.validate(_cache(tmp_path), cfg, CASE, replace(st, targs=("1",)), size, run)
    assert runs == [1, 1]


def test_the_page_marks_reused_results_and_the_figures_timed_again(tmp_path: Path) -> None:
    from profiler_report.report.build import render_capture
    from profiler_report.util.fsio import write_json

    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    rc = _cache(tmp_path / "cache")
    out = tmp_path / "warm"
    _profile(rc, out, _profiled())
    rc.retimed = ["memcpy", "naive"]
    choice = {"stage": "vec_realigned", "chosen": "[32,16,512,2]", "chosen_us": 1320.5, "runner_up": "[16,16,512]",
              "runner_up_us": 1331.0, "default": "[16,16,256]", "candidates": 15}
    write_json(out / reuse.REUSE, reuse.document(rc, [choice]))
    render_capture(out / "profile.ncu-rep", out, live=True, case=CASE)
    html = (out / "index.html").read_text()
    assert 'id="reuse"' in html and "9 results were reused" in html and "memcpy, naive" in html
    assert html.count("<code>abc123</code>") == 9
    assert "configuration [32,16,512,2] (stages.toml: [16,16,256]) at 1320.5 us median, runner-up [16,16,512] at " \
           "1331.0 us" in html
    (out / reuse.REUSE).unlink()
    render_capture(out / "profile.ncu-rep", out, live=True, case=CASE)
    assert 'id="reuse"' not in (out / "index.html").read_text()


def test_render_from_a_runs_profile_reads_the_reused_stages_too(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from profiler_report.cli import main

    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    real = reuse.stage_key
    monkeypatch.setattr(reuse, "stage_key", lambda case, stage, *a, **kw: {**real(case, stage, *a, **kw), "x": 1}
                        if stage.id == "smem" else real(case, stage, *a, **kw))
    _profile(_cache(tmp_path / "cache"), tmp_path / "edit", _profiled())
    res = CliRunner().invoke(main, ["render", "--from", str(tmp_path / "edit" / "profile.ncu-rep"),
                                    "--out", str(tmp_path / "page")])
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(tmp_path / "page" / "summary.csv")
    assert list(summary["stage"]) == IN_CAPTURE


def test_summary_and_check_of_a_runs_profile_read_the_reused_stages_too(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from profiler_report.cli import main

    _profile(_cache(tmp_path / "cache"), tmp_path / "cold", _profiled())
    real = reuse.stage_key
    monkeypatch.setattr(reuse, "stage_key", lambda case, stage, *a, **kw: {**real(case, stage, *a, **kw), "x": 1}
                        if stage.id == "vec_deep" else real(case, stage, *a, **kw))
    _profile(_cache(tmp_path / "cache"), tmp_path / "edit", _profiled())
    res = CliRunner().invoke(main, ["summary", str(tmp_path / "edit" / "profile.ncu-rep")])
    assert res.exit_code == 0, res.output
    assert [line.split(",")[0] for line in res.output.splitlines()[1:]] == IN_CAPTURE
    res = CliRunner().invoke(main, ["check", str(tmp_path / "edit" / "profile.ncu-rep"), "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    assert {r["stage"] for r in json.loads(res.output)["results"]} >= {"naive", "vec_deep", "vec_colwalk"}
