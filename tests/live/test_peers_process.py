"""live/peers_process.py without a GPU: the request and answer between the run and its peers'
process (a stand-in child script), the process's own side (:func:`serve`) on a recording case,
and a run that falls back to timing the peers itself when the process gives no answer."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from fakes import install_fake_gpu

from profiler_report.live import peers_process as pp
from profiler_report.live import session
from profiler_report.live.config import RunConfig
from profiler_report.model.base import Case
from profiler_report.model.experiment import RESULT_PREFIX
from profiler_report.model.registry import get_case

CASE = get_case("transpose")


def _child(tmp_path: Path, body: str) -> pp.PeersProcess:
    script = tmp_path / "child.py"
    script.write_text(f"import json, sys, time\nPREFIX = {RESULT_PREFIX!r}\n{body}")
    return pp.PeersProcess(subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                            start_new_session=True))


def _stages():
    chosen = replace(CASE.manifest.stage("vec_realigned"), targs=("16", "32", "512"))
    return [CASE.manifest.stage("padded"), chosen]


def test_the_request_names_each_stage_with_its_configuration_and_the_answer_is_read_back(tmp_path):
    proc = _child(tmp_path, "req = json.loads(sys.stdin.readline())\n"
                            "print('a warning of a peer library')\n"
                            "print(PREFIX + json.dumps({'rows': [], 'asked': req}))\n")
    doc, why = proc.bench(_stages(), 30, {"commit": "abc"}, 30)
    assert why == ""
    assert doc == {"rows": [], "asked": {"stages": [["padded", []], ["vec_realigned", ["16", "32", "512"]]],
                                         "repeats": 30, "provenance": {"commit": "abc"}}}


def test_the_answer_is_taken_without_waiting_for_the_process_to_exit(tmp_path):
    # TorchInductor's and JAX's teardown at exit took seconds after the answer on the device
    proc = _child(tmp_path, "sys.stdin.readline()\n"
                            "print(PREFIX + json.dumps({'rows': []}), flush=True)\n"
                            "time.sleep(60)\n")
    t0 = time.monotonic()
    assert proc.bench(_stages(), 30, {}, 30) == ({"rows": []}, "")
    assert time.monotonic() - t0 < 15 and proc.proc.poll() is not None  # stopped, not waited for


def test_a_process_that_fails_gives_no_answer_and_its_last_line(tmp_path):
    proc = _child(tmp_path, "sys.stdin.readline()\nprint('RuntimeError: boom')\nsys.exit(1)\n")
    assert proc.bench(_stages(), 30, {}, 30) == (None, "exit 1: RuntimeError: boom")


def test_a_process_that_hangs_is_stopped_after_the_timeout(tmp_path):
    proc = _child(tmp_path, "sys.stdin.readline()\ntime.sleep(60)\n")
    doc, why = proc.bench(_stages(), 30, {}, 1)
    assert doc is None and why == "no answer within 1 s"
    assert proc.proc.poll() is not None


def test_close_stops_a_process_still_importing(tmp_path):
    proc = _child(tmp_path, "time.sleep(60)\n")
    proc.close()
    assert proc.proc.wait(timeout=10) is not None


def test_serve_imports_then_answers_the_one_request(monkeypatch, capsys):
    asked = []

    def bench_at(self, size, dtype, repeats, stages, prov):
        asked.append((size, dtype, repeats, [(s.id, s.targs) for s in stages], prov))
        return {"provenance": prov, "rows": [{"name": "x", "median_us": float("nan")}]}

    monkeypatch.setattr(Case, "bench_at", bench_at)
    monkeypatch.setattr(pp, "PEER_IMPORTS", ("json", "a_module_that_is_not_installed"))
    request = {"stages": [["padded", []], ["vec_realigned", ["16", "32", "512"]]], "repeats": 7,
               "provenance": {"commit": "abc"}}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(request) + "\n"))
    assert pp.serve(CASE, {"rows": 64, "cols": 32}, "float32") == 0
    assert asked == [({"rows": 64, "cols": 32}, "float32", 7,
                      [("padded", CASE.manifest.stage("padded").targs), ("vec_realigned", ("16", "32", "512"))],
                      {"commit": "abc"})]
    ready, timed, line = capsys.readouterr().out.strip().splitlines()
    assert ready.startswith(pp.READY + " ") and timed.startswith(pp.TIMED + " ")  # with their seconds
    assert line.startswith(RESULT_PREFIX)
    assert json.loads(line[len(RESULT_PREFIX):])["rows"][0]["name"] == "x"


def test_serve_with_no_request_does_nothing(monkeypatch, capsys):
    monkeypatch.setattr(Case, "bench_at", lambda *a: (_ for _ in ()).throw(AssertionError("timed without a request")))
    monkeypatch.setattr(pp, "PEER_IMPORTS", ())
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert pp.serve(CASE, {"rows": 64, "cols": 32}, "float32") == 0
    assert capsys.readouterr().out.startswith(pp.READY + " ")


def test_a_run_asks_its_peers_process_and_times_the_peers_itself_when_it_gives_nothing(monkeypatch, tmp_path,
                                                                                        capsys):
    install_fake_gpu(monkeypatch)
    calls: list = []

    class Worker:
        seconds: dict = {}

        def bench(self, good, repeats, prov, timeout_s):
            calls.append([s.id for s in good])
            return None, "exit 1: boom"

        def close(self):
            calls.append("closed")

    monkeypatch.setattr(session, "start_peers", lambda rc, cfg, case: Worker())
    monkeypatch.setattr(session.gpu, "free_cached_memory", lambda: calls.append("freed"))
    monkeypatch.setattr(Case, "bench_at", lambda self, size, dtype, repeats, stages, prov: {"rows": [], "here": 1})
    cfg = RunConfig(case="transpose", size={"rows": 64, "cols": 32}, counters=False, sanitize=False, cache=False,
                    choose=False)
    session.live_run(cfg, tmp_path / "r", peers=True)
    assert calls == ["freed", [s.id for s in CASE.manifest.stages], "closed"]
    err = capsys.readouterr().err
    assert "the peers' process gave no result (exit 1: boom); timing the peers in this process" in err
    assert json.loads((tmp_path / "r" / "bench.json").read_text()) == {"rows": [], "here": 1}


def test_no_peers_process_when_the_peers_timings_will_be_reused(monkeypatch):
    monkeypatch.setattr(session.reuse, "peers_cached", lambda rc, cfg, case: True)
    assert session.start_peers(None, RunConfig(), CASE) is None  # type: ignore[arg-type]


_WARMING = ("req = json.loads(sys.stdin.readline())\n"
            "if req.get('warm'):\n"
            "    print('compiling', flush=True)\n"
            "    {warm}\n"
            "    req = json.loads(sys.stdin.readline())\n"
            "print(PREFIX + json.dumps({{'rows': [], 'asked': req}}))\n")


def test_ready_says_whether_the_imports_are_over_without_waiting(tmp_path):
    proc = _child(tmp_path, "print('a warning of a peer library', flush=True)\n"
                            "sys.stdin.readline()\n"  # still importing until told
                            f"print({pp.READY!r} + ' 12.5', flush=True)\n"
                            + _WARMING.format(warm=f"print({pp.WARMED!r})").replace(
                                "print(PREFIX", f"print({pp.TIMED!r} + ' 3.0')\nprint(PREFIX"))
    time.sleep(0.5)
    t0 = time.monotonic()
    assert not proc.ready() and time.monotonic() - t0 < 0.2
    proc.proc.stdin.write("\n")
    proc.proc.stdin.flush()
    deadline = time.monotonic() + 20
    while not proc.ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.ready()
    proc.warm()  # what follows READY is read as before
    assert proc.warmed(30) == ""
    doc, why = proc.bench(_stages(), 30, {}, 30)
    assert why == "" and doc is not None and doc["asked"]["repeats"] == 30
    assert proc.seconds == {"imports": 12.5, "timings": 3.0}  # said in the run's log


def test_the_run_waits_for_the_warm_up_then_asks_for_the_timings(tmp_path):
    proc = _child(tmp_path, _WARMING.format(warm=f"print({pp.WARMED!r}, flush=True)"))
    proc.warm()
    assert proc.warmed(30) == ""
    doc, why = proc.bench(_stages(), 30, {}, 30)
    assert why == "" and doc is not None and doc["asked"]["repeats"] == 30


def test_a_warm_up_past_its_time_stops_the_process_before_anything_is_timed(tmp_path):
    proc = _child(tmp_path, _WARMING.format(warm="time.sleep(60)"))
    proc.warm()
    assert proc.warmed(1) == "no warm-up within 1 s"
    assert proc.proc.poll() is not None


def test_a_process_that_ends_in_its_warm_up_says_its_last_line(tmp_path):
    proc = _child(tmp_path, _WARMING.format(warm="sys.exit(3)"))
    proc.warm()
    assert proc.warmed(30) == "it ended: compiling"


def test_serve_warms_up_when_asked_then_answers(monkeypatch, capsys):
    warmed = []
    monkeypatch.setattr(Case, "warm_peers", lambda self, size, dtype: warmed.append((size, dtype)))
    monkeypatch.setattr(Case, "bench_at", lambda self, size, dtype, repeats, stages, prov: {"rows": []})
    monkeypatch.setattr(pp, "PEER_IMPORTS", ())
    request = {"stages": [["padded", []]], "repeats": 7, "provenance": {}}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"warm": True}) + "\n" + json.dumps(request) + "\n"))
    assert pp.serve(CASE, {"rows": 64, "cols": 32}, "float32") == 0
    assert warmed == [({"rows": 64, "cols": 32}, "float32")]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(pp.READY) and out[1] == pp.WARMED and out[2].startswith(pp.TIMED)
    assert out[3].startswith(RESULT_PREFIX)


def _sanitized(job, text, folder, **kw):
    from profiler_report.live import sanitizer as san

    runs = {t: san.ToolRun(t, processes=1, seconds=1.0) for t in san.TOOLS}
    outs = {t: [san.ToolOutput(t, errors=0, begun=list(job.stages),
                               ended={s: {"stage": s, "correct": True} for s in job.stages})] for t in san.TOOLS}
    return {"schema": san.SCHEMA, "tool": "/fake/compute-sanitizer", "version": "2025.3.1.0",
            "tools": [vars(r) for r in runs.values()], "size": {"rows": 67, "cols": 133}, "size_text": "67x133",
            "dtype": "float32", "stages": san.stage_results(list(job.stages), san.TOOLS, runs, outs), "other": []}


@pytest.mark.parametrize(("ready", "warm_up"), [(True, ""), (True, "no warm-up within 600 s"), (False, "")])
def test_the_warm_up_runs_beside_the_sanitizer_and_is_over_before_anything_is_timed(ready, warm_up, monkeypatch,
                                                                                    tmp_path, capsys):
    from profiler_report.live import kernels as kmod
    from profiler_report.util.timer import StepTimer

    install_fake_gpu(monkeypatch)
    events: list[str] = []

    class Worker:
        seconds: dict = {}

        def ready(self):
            return ready

        def warm(self):
            events.append("warm")

        def warmed(self, timeout_s):
            events.append("warmed")
            return warm_up

        def bench(self, good, repeats, prov, timeout_s):
            events.append("bench")
            return {"rows": [], "from": "process"}, ""

        def close(self):
            events.append("closed")

    time_stages = kmod.time_stages
    monkeypatch.setattr(kmod, "time_stages", lambda *a: events.append("time") or time_stages(*a))
    monkeypatch.setattr(session, "start_peers", lambda rc, cfg, case: Worker())
    monkeypatch.setattr(session.gpu, "free_cached_memory", lambda: None)
    monkeypatch.setattr(session.san, "resolve", lambda wanted: ("/fake/compute-sanitizer", ""))
    monkeypatch.setattr(session.san, "sanitize", lambda *a, **kw: events.append("sanitize") or _sanitized(*a, **kw))
    monkeypatch.setattr(Case, "bench_at", lambda self, size, dtype, repeats, stages, prov: {"rows": [], "from": "run"})
    cfg = RunConfig(case="transpose", size={"rows": 64, "cols": 32}, counters=False, cache=False, choose=False)
    timer = StepTimer()
    session.live_run(cfg, tmp_path / "r", peers=True, timer=timer)
    bench = json.loads((tmp_path / "r" / "bench.json").read_text())
    if not ready:  # still importing when the sanitizer starts: no warm-up, the peers' step builds them
        assert events == ["sanitize", "time", "bench", "closed"] and bench["from"] == "process"
    elif not warm_up:
        assert events == ["warm", "sanitize", "warmed", "time", "bench", "closed"]
        assert bench["from"] == "process"
    else:  # stopped: the peers are timed in the run's own process
        assert events == ["warm", "sanitize", "warmed", "time", "closed"] and bench["from"] == "run"
        assert "the peers' process stopped (no warm-up within 600 s)" in capsys.readouterr().err
    assert ("peers_warmup" in [name for name, _ in timer.steps]) == ready


def test_the_peers_are_timed_after_ncu_and_the_experiments_compiled_beside_the_sanitizer(monkeypatch, tmp_path):
    from fakes import NCU_CONNECTED, fake_ncu_writing

    from profiler_report.live import kernels as kmod

    install_fake_gpu(monkeypatch)
    events: list[str] = []

    class Worker:
        seconds: dict = {}

        def ready(self):
            return False

        def bench(self, good, repeats, prov, timeout_s):
            events.append("bench")
            return {"rows": []}, ""

        def close(self):
            events.append("closed")

    def precompile(case):
        time.sleep(0.5)  # still compiling when the fake sanitizer is done: waited for before the timing
        events.append("precompiled")

    time_stages, run_ncu = kmod.time_stages, session.prof.run_ncu
    monkeypatch.setattr(kmod, "time_stages", lambda *a: events.append("time") or time_stages(*a))
    monkeypatch.setattr(session.prof, "run_ncu", lambda *a, **kw: events.append("ncu") or run_ncu(*a, **kw))
    monkeypatch.setattr(session, "start_peers", lambda rc, cfg, case: Worker())
    monkeypatch.setattr(session, "_precompile", precompile)
    monkeypatch.setattr(session.gpu, "free_cached_memory", lambda: None)
    monkeypatch.setattr(session.san, "resolve", lambda wanted: ("/fake/compute-sanitizer", ""))
    monkeypatch.setattr(session.san, "sanitize", lambda *a, **kw: events.append("sanitize") or _sanitized(*a, **kw))
    report = Path(__file__).parents[1] / "data" / "h200_f32_4096" / "profile.ncu-rep"
    ncu = fake_ncu_writing(tmp_path / "bin", report, [NCU_CONNECTED])
    cfg = RunConfig(case="transpose", size={"rows": 64, "cols": 32}, ncu=str(ncu), cache=False, choose=False,
                    stages=["naive", "smem"])  # a subset: no experiment is run nor compiled
    session.live_run(cfg, tmp_path / "r", peers=True, render=lambda _folder: None)
    assert events == ["sanitize", "time", "ncu", "bench", "closed"]
    events.clear()
    monkeypatch.setattr(session, "profile_good", lambda *a: events.append("ncu"))  # the whole ladder
    session.live_run(RunConfig(**{**cfg.__dict__, "stages": []}), tmp_path / "r2", peers=True,
                     render=lambda _folder: None)
    assert events == ["sanitize", "precompiled", "time", "ncu", "bench", "closed"]
