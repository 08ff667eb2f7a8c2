"""driver: interruption and faults leave every earlier report intact; partial output is kept with a
message or removed; every file the tool writes goes to a temporary name first.

The GPU side is replaced by test doubles (tests/fakes.py): nothing here is a measurement.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from fakes import (
    NCU_CONNECTED,
    NCU_FAILED_KERNEL,
    NCU_NO_KERNELS,
    NCU_PERM,
    fake_ncu_printing,
    fake_ncu_writing,
    install_fake_gpu,
)

from profiler_report.errors import (
    CounterPermissionError,
    InputError,
    KernelIncorrectError,
    NcuFailedError,
    NcuNotFoundError,
    NoKernelProfiledError,
    StageNotProfiledError,
)
from profiler_report.live.config import RunConfig
from profiler_report.live.gpu import EVENT_TIMING
from profiler_report.live.session import git_commit, live_run
from profiler_report.util.fsio import atomic_dir, write_json
from profiler_report.util.timer import StepTimer

PACKAGE = Path(__file__).resolve().parents[2] / "profiler_report"



def _intact(dest: Path) -> bool:
    return (dest / "index.html").read_text() == "earlier report\n" and sorted(p.name for p in dest.iterdir()) == [
        "index.html"]


# --------------------------------------------------------------------------------------------
# atomic_dir


def test_success_replaces_the_earlier_report(earlier):
    with atomic_dir(earlier) as out:
        assert out.name == "report.partial"
        (out / "index.html").write_text("new\n")
    assert (earlier / "index.html").read_text() == "new\n"
    assert not (earlier.parent / "report.partial").exists() and not (earlier.parent / "report.old").exists()


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()])
def test_failure_or_ctrl_c_keeps_the_earlier_report_and_the_partial_with_a_message(earlier, exc, capsys):
    with pytest.raises(type(exc)), atomic_dir(earlier) as out:
        (out / "timings.json").write_text("{}\n")
        raise exc
    assert _intact(earlier)
    partial = earlier.parent / "report.partial"
    assert (partial / "timings.json").is_file()
    err = capsys.readouterr().err
    assert f"partial output kept in {partial}" in err and "untouched" in err


def test_a_file_where_the_report_goes_is_refused_before_anything_is_written(tmp_path):
    # It was renamed to <file>.old, then rmtree failed on it: exit 70 after the whole run.
    target = tmp_path / "afile"
    target.write_text("mine\n")
    with pytest.raises(InputError, match="is a file, not a folder"), atomic_dir(target):
        pass
    assert target.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_partial_can_be_removed_instead(earlier):
    with pytest.raises(KeyboardInterrupt), atomic_dir(earlier, keep_partial=False) as out:
        (out / "x").write_text("x")
        raise KeyboardInterrupt
    assert _intact(earlier)
    assert not (earlier.parent / "report.partial").exists()


def test_a_stale_partial_is_replaced(earlier):
    stale = earlier.parent / "report.partial"
    stale.mkdir()
    (stale / "junk").write_text("junk")
    with atomic_dir(earlier) as out:
        assert not (out / "junk").exists()


def test_step_timer_without_progress_logs_nothing_until_its_table(capsys):
    timer = StepTimer(progress=False)
    with timer.step("read"):
        pass
    assert capsys.readouterr().err == ""
    assert [name for name, _ in timer.steps] == ["read"]
    assert timer.table().splitlines()[1].split()[0] == "read"
    with StepTimer().step("read"):
        pass
    assert capsys.readouterr().err.startswith("[read] ...\n[read] ")


def test_write_json_goes_through_a_temporary_name(tmp_path):
    write_json(tmp_path / "a.json", {"x": 1})
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


# --------------------------------------------------------------------------------------------
# live_run with the GPU replaced by test doubles


def _cfg(**kw) -> RunConfig:
    kw.setdefault("sanitize", False)  # the GPU is a test double: no real compute-sanitizer child
    return RunConfig(size={"rows": 64, "cols": 64}, dtype="float32", **kw)


def test_wrong_kernel_is_marked_and_run_fails_after_writing_the_others(earlier, monkeypatch):
    from profiler_report.report.build import render_timings_only

    install_fake_gpu(monkeypatch)
    monkeypatch.setenv("FAKE_WRONG_STAGES", "smem")
    with pytest.raises(KernelIncorrectError) as exc:
        live_run(_cfg(counters=False), earlier, render=render_timings_only)
    assert exc.value.exit_code == 1
    assert "report written to" in exc.value.message
    validation = json.loads((earlier / "validation.json").read_text())
    assert {v["stage"]: v["correct"] for v in validation}["smem"] is False
    timed = [t["name"] for t in json.loads((earlier / "timings.json").read_text())["timings"]]
    assert "smem" not in timed and "naive" in timed and "padded" in timed  # no speed for the wrong stage
    html = (earlier / "index.html").read_text()
    assert "no speed is claimed" in html and "not claimed (incorrect)" in html
    summary = json.loads((earlier / "summary.json").read_text())["stages"]
    smem = next(s for s in summary if s["stage"] == "smem")
    assert smem["event_median_us"] is None


@pytest.mark.parametrize("lines, status, error", [
    ([NCU_CONNECTED, NCU_PERM], 1, CounterPermissionError),
    ([NCU_CONNECTED, NCU_NO_KERNELS], 0, NoKernelProfiledError),
    ([NCU_CONNECTED, "==ERROR== An error was reported by the driver"], 9, NcuFailedError),
])
def test_ncu_failure_leaves_the_earlier_report_intact(earlier, tmp_path, monkeypatch, capsys, lines, status, error):
    install_fake_gpu(monkeypatch)
    ncu = fake_ncu_printing(tmp_path / "bin", lines, status)
    with pytest.raises(error):
        live_run(_cfg(ncu=str(ncu)), earlier, render=lambda _folder: None)
    assert _intact(earlier)
    partial = earlier.parent / "report.partial"
    assert (partial / "validation.json").is_file() and (partial / "ncu.log").is_file()
    assert "partial output kept" in capsys.readouterr().err


REPORT = Path(__file__).parents[1] / "data" / "h200_f32_4096" / "profile.ncu-rep"  # naive ... vec_colwalk, copy


@pytest.mark.parametrize("report, lines, words", [
    (None, [NCU_CONNECTED, NCU_FAILED_KERNEL], "wrote no report"),  # exit 0, nothing written
    (REPORT, [NCU_CONNECTED], "lacks stages vec_tuned, vec_peeled"),  # the report misses requested stages
])
def test_a_partial_profile_is_exit_5_with_the_partial_folder_kept(earlier, tmp_path, monkeypatch, capsys, report,
                                                                   lines, words):
    install_fake_gpu(monkeypatch)
    ncu = fake_ncu_writing(tmp_path / "bin", report, lines)
    rendered = []
    with pytest.raises(StageNotProfiledError) as exc:
        live_run(_cfg(ncu=str(ncu)), earlier, render=rendered.append)
    assert exc.value.exit_code == 5 and words in exc.value.message
    assert "--nvtx-include pr_transpose.vec_tuned/" in exc.value.message
    assert "--nvtx-include pr_transpose.vec_peeled/" in exc.value.message
    assert not rendered  # no page claims counters (or their absence) for stages ncu did not profile
    assert _intact(earlier)
    partial = earlier.parent / "report.partial"
    assert (partial / "provenance.json").is_file() and (partial / "ncu.log").is_file()
    assert "partial output kept" in capsys.readouterr().err


def test_a_complete_profile_is_rendered(earlier, tmp_path, monkeypatch):
    install_fake_gpu(monkeypatch)
    ncu = fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_CONNECTED])
    rendered, timer = [], StepTimer(progress=False)
    live_run(_cfg(ncu=str(ncu), stages=["naive", "smem"]), earlier, render=rendered.append, timer=timer)
    assert [p.name for p in rendered] == ["report.partial"] and (earlier / "profile.ncu-rep").is_file()
    # the table holds the setup too (the GPU's context, the tools, the cache), first
    assert [n for n, _ in timer.steps][:1] == ["setup"] and "render" in dict(timer.steps)


@pytest.mark.parametrize("fails", [False, True])
def test_the_render_is_readied_while_ncu_profiles_and_waited_for(earlier, tmp_path, monkeypatch, fails):
    import threading
    import time

    install_fake_gpu(monkeypatch)
    ncu = fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_CONNECTED])
    events: list[str] = []
    release = threading.Event()

    def prepare() -> None:
        release.wait(5)
        time.sleep(1.0)  # still busy when ncu's step ends: the render must wait for it
        events.append("prepared")
        if fails:
            raise RuntimeError("an import failed")

    def render(_folder: Path) -> None:
        events.append("render")

    def run_ncu(*a, **kw):
        events.append("ncu")
        release.set()
        return real_run_ncu(*a, **kw)

    from profiler_report.live import session

    real_run_ncu = session.prof.run_ncu
    monkeypatch.setattr(session.prof, "run_ncu", run_ncu)
    live_run(_cfg(ncu=str(ncu), stages=["naive"]), earlier, render=render, prepare=prepare)
    assert events == ["ncu", "prepared", "render"]
    # The provenance says how the event timings were taken (the page's "event timing" row).
    prov = json.loads((earlier / "provenance.json").read_text())
    assert prov["event_timing"] == EVENT_TIMING and "queued behind a hold" in prov["event_timing"]


def test_ncu_missing_fails_before_any_work(earlier, tmp_path, monkeypatch):
    install_fake_gpu(monkeypatch)
    with pytest.raises(NcuNotFoundError):
        live_run(_cfg(ncu=str(tmp_path / "nope" / "ncu")), earlier)
    assert _intact(earlier)
    assert not (earlier.parent / "report.partial").exists()


# --------------------------------------------------------------------------------------------
# Every writer: temporary name, then rename


#: Writes allowed without a temporary name: (file, target expression prefix) inside <dest>.partial,
#: a folder that atomic_dir renames into place as a whole.
# Writes allowed without a temporary name: files inside the run's own <dest>.partial folder, and
# fsio's branch for devices and FIFOs (/dev/stdout), which a rename would replace.
INSIDE_PARTIAL = {("driver.py", "out /"), ("fsio.py", "dest")}


def _writes(tree: ast.AST, text: str) -> list[tuple[int, str]]:
    """(line, target expression) of every file write in a module."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("write_text", "write_bytes"):
            out.append((node.lineno, ast.get_source_segment(text, f.value) or ""))
        elif isinstance(f, ast.Attribute) and f.attr == "open" and node.args \
                and isinstance(node.args[0], ast.Constant) and any(m in str(node.args[0].value) for m in "wax"):
            out.append((node.lineno, ast.get_source_segment(text, f.value) or ""))
        elif isinstance(f, ast.Name) and f.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                  None)
            if isinstance(mode, ast.Constant) and any(m in str(mode.value) for m in "wax"):
                out.append((node.lineno, ast.get_source_segment(text, node.args[0]) or ""))
        elif isinstance(f, ast.Attribute) and f.attr in ("copyfile", "copy", "copy2") and len(node.args) > 1:
            out.append((node.lineno, ast.get_source_segment(text, node.args[1]) or ""))
    return out


def test_every_file_the_tool_writes_goes_to_a_temporary_name_first():
    offenders = []
    for path in sorted(PACKAGE.glob("*.py")):
        text = path.read_text()
        for line, target in _writes(ast.parse(text), text):
            if "tmp" in target.lower() or any(path.name == f and target.startswith(p) for f, p in INSIDE_PARTIAL):
                continue
            offenders.append(f"{path.name}:{line} writes {target}")
    assert not offenders, "write to a temporary name and os.replace() it: " + "; ".join(offenders)


def test_commit_named_in_the_environment_wins_over_a_stale_checkout(monkeypatch, tmp_path):
    # A tree copied to a GPU machine may carry an old .git; the commit it was sent from is explicit.
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.delenv("PROFILER_REPORT_COMMIT", raising=False)
    assert git_commit(tmp_path) == "unknown"  # a repository without a commit
    monkeypatch.setenv("PROFILER_REPORT_COMMIT", "0123456789ab")
    assert git_commit(tmp_path) == "0123456789ab"
    assert git_commit(Path(__file__).parents[1]) == "0123456789ab"


def test_a_second_run_reuses_the_capture_and_validation_and_times_again(tmp_path, monkeypatch):
    from profiler_report.live import reuse

    install_fake_gpu(monkeypatch)
    cfg = _cfg(ncu=str(fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_CONNECTED])), stages=["naive", "smem"])
    live_run(cfg, tmp_path / "a", render=lambda _folder: None)
    # ncu now fails if it is started at all: everything it would profile must come from the cache
    again = RunConfig(**{**cfg.__dict__, "ncu": str(fake_ncu_printing(tmp_path / "bin2", [NCU_CONNECTED], 9))})
    live_run(again, tmp_path / "b", render=lambda _folder: None)
    doc = json.loads((tmp_path / "b" / "reuse.json").read_text())
    assert {(r["what"], r["stage"]) for r in doc["reused"]} == {
        (w, s) for w in ("profile", "validation") for s in ("naive", "smem", "copy")}
    assert doc["retimed"] == ["memcpy", "naive", "smem", "copy"]
    assert (tmp_path / "b" / "profile.ncu-rep").read_bytes() == (tmp_path / "a" / "profile.ncu-rep").read_bytes()
    # the smem kernel edited: it alone is profiled again; the ladder comes from both captures
    real = reuse.stage_key
    monkeypatch.setattr(reuse, "stage_key", lambda case, stage, *a, **kw: {**real(case, stage, *a, **kw), "x": 1}
                        if stage.id == "smem" else real(case, stage, *a, **kw))
    live_run(cfg, tmp_path / "c", render=lambda _folder: None)
    parts = json.loads((tmp_path / "c" / "profile-parts.json").read_text())["parts"]
    assert [p["stages"] for p in parts] == [["naive"], ["smem"], ["copy"]]
    assert parts[1]["file"] == "profile.ncu-rep" and parts[0]["file"] == parts[2]["file"] != "profile.ncu-rep"
    with pytest.raises(NcuFailedError):  # --fresh: every stage profiled again (and ncu fails here)
        live_run(RunConfig(**{**again.__dict__, "fresh": True}), tmp_path / "d", render=lambda _folder: None)


@pytest.mark.parametrize(("profile_size", "wrong", "validated"), [
    ({}, "", True),  # validated at the profile's size by the run: the target does not again
    ({"rows": 32, "cols": 32}, "", False),  # another size: the target validates there
    ({}, "copy", False),  # the ceiling was wrong: the target validates (and refuses it)
])
def test_the_target_validates_again_only_where_the_run_did_not(earlier, tmp_path, monkeypatch, profile_size, wrong,
                                                              validated):
    from profiler_report.live import session

    install_fake_gpu(monkeypatch)
    monkeypatch.setenv("FAKE_WRONG_STAGES", wrong)
    ncu = fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_CONNECTED])
    targets = []
    run_ncu = session.prof.run_ncu
    monkeypatch.setattr(session.prof, "run_ncu",
                        lambda cmd, *a, **kw: targets.append(cmd.target) or run_ncu(cmd, *a, **kw))
    cfg = _cfg(ncu=str(ncu), stages=["naive", "smem"], profile_size=profile_size)
    try:
        live_run(cfg, earlier, render=lambda _folder: None)
    except KernelIncorrectError:
        assert wrong
    assert len(targets) == 1 and ("--validated" in targets[0]) == validated

