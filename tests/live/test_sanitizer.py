"""compute-sanitizer as a correctness gate (profiler_report.live.sanitizer, analysis.sanitizer):
parsing the tool's output, the rerun after a stage that stops its child, the run flag, the
WRONG marking and the report lines.

Real output: tests/data/sanitizer/*.log, recorded on the H200 by scripts/device/sanitizer.sh
(see tests/data/sanitizer/README.md); those tests skip, saying so, until the logs are committed.
The short snippets below are hand-written in the tool's line format to pin one parsing rule
each; the fake compute-sanitizer is a test double (no measurement).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import DATA, F32
from fakes import install_fake_gpu

from profiler_report.analysis.sanitizer import sanitizer_text, stage_text, summary_entry
from profiler_report.errors import KernelIncorrectError, SanitizerNotFoundError
from profiler_report.live import sanitizer as san
from profiler_report.live.config import RunConfig
from profiler_report.live.session import live_run
from profiler_report.model.registry import get_case

LOGS = DATA / "sanitizer"
BROKEN = LOGS / "broken_case"


def _log(name: str) -> str:
    path = LOGS / name
    if not path.is_file():
        pytest.skip(f"{path} not recorded yet: the lead runs scripts/device/sanitizer.sh on the H200")
    return path.read_text(encoding="utf-8", errors="replace")


def _begin(stage: str, *kernels: str) -> str:
    return san.BEGIN + json.dumps({"stage": stage, "kernels": list(kernels)})


def _end(stage: str, correct: bool = True, message: str = "") -> str:
    return san.END + json.dumps({"stage": stage, "correct": correct, "message": message})


# -- real H200 output -------------------------------------------------------------------------


def _by_stage(out: san.ToolOutput) -> dict[str | None, list[san.Finding]]:
    found: dict[str | None, list[san.Finding]] = {}
    for f in out.findings:
        if f.severity == "error":
            found.setdefault(f.stage, []).append(f)
    return found


def test_racecheck_output_names_the_missing_barrier_stage_only():
    out = san.parse_output("racecheck", _log("broken-racecheck.log"))
    found = _by_stage(out)
    assert "nosync" in found and "padded" not in found, found
    assert out.errors and out.errors > 0
    assert set(out.ended) >= {"padded", "nosync", "barrier_in_bounds", "copy"}


def test_synccheck_is_silent_on_sm90_where_racecheck_names_the_barrier_inside_the_bounds_check():
    # Measured on the H200 (2025.3.1, sm_90): synccheck reports no error for the barrier inside the
    # bounds check; racecheck reports the race it leaves, and the validation the wrong output.
    sync = san.parse_output("synccheck", _log("broken-synccheck.log"))
    assert sync.errors == 0 and not _by_stage(sync)
    assert not sync.ended["barrier_in_bounds"]["correct"]
    race = _by_stage(san.parse_output("racecheck", _log("broken-racecheck.log")))
    assert "barrier_in_bounds" in race and "padded" not in race, race


@pytest.mark.parametrize("tool", san.TOOLS)
def test_every_transpose_stage_is_clean_in_the_recorded_run(tool):
    out = san.parse_output(tool, _log(f"transpose-{tool}.log"))
    assert out.errors == 0 and not _by_stage(out)
    assert out.begun and all(out.ended[s]["correct"] for s in out.begun)
    assert "naive" in out.begun and "copy" in out.begun


# -- parsing rules (hand-written lines in the tool's format) ----------------------------------


def test_a_block_goes_to_the_stage_whose_kernel_it_names_not_the_section_it_falls_in():
    text = "\n".join([
        "========= COMPUTE-SANITIZER",
        _begin("a", "k_a<float>"), _end("a"),
        _begin("b", "k_b<float,16,16,256>"),
        "========= Invalid __global__ read of size 4 bytes",
        "=========     at void k_a<float>(const float *, float *, int, int)+0x1d0",
        "=========     by thread (0,0,0) in block (0,0,0)",
        "=========",
        "========= Barrier error detected. Divergent thread(s) in block",
        "=========     at void k_b<float, (int)16, (int)16, (int)256>(const float *, float *, int, int)+0x90",
        _end("b"),
        "========= ERROR SUMMARY: 2 errors",
    ])
    out = san.parse_output("memcheck", text)
    assert out.errors == 2
    assert [(f.stage, f.text.split(" (")[0]) for f in out.findings] == [
        ("a", "Invalid __global__ read of size 4 bytes"), ("b", "Barrier error detected. Divergent thread(s) in block")]
    assert "k_a<float>" in out.findings[0].text  # the location travels with the first line


def test_a_kernel_of_no_stage_is_other_and_a_nameless_block_is_its_section():
    text = "\n".join([
        _begin("a", "k_a<float>"),
        "========= Invalid __global__ write of size 1 bytes",
        "=========     at cupy_copy__float_float+0x40",
        "========= Program hit cudaErrorLaunchFailure (error 719) on CUDA API call to cudaDeviceSynchronize.",
        _end("a", False, "raised CUDARuntimeError"),
        "========= Error: process didn't terminate successfully",
        "========= Target application returned an error",
        "=========     Saved host backtrace up to driver entry point at error",
        "=========         Host Frame: cudaDeviceSynchronize [0x5d2e1] in libcudart.so.13",
    ])
    out = san.parse_output("memcheck", text)
    assert [f.stage for f in out.findings] == [None, "a"]
    assert out.findings[0].kernel == "cupy_copy__float_float"
    assert out.errors is None  # no ERROR SUMMARY: the tool did not finish


@pytest.mark.parametrize("expr, shown", [
    ("transpose_vec_tuned<float,16,16,256>",
     "void transpose_vec_tuned<float, (int)16, (int)16, (int)256>(const float*, float*, int, int)"),
    ("transpose_padded<double>", "transpose_padded<double>(const double *, double *, int, int)"),
    ("reduce_pass<float,256u>", "void reduce_pass<float, 256U>(const float *, float *, unsigned int)"),
])
def test_name_expressions_and_demangled_names_compare_equal(expr, shown):
    assert san.kernel_key(expr) == san.kernel_key(shown)


def test_a_mangled_name_is_matched_by_its_length_prefixed_identifier():
    assert san._candidates("_Z16transpose_paddedIfEvPKT_PS0_ii", {"padded": ["transpose_padded<float>"],
                                                                 "naive": ["transpose_naive<float>"]}) == ["padded"]


# -- the child loop (a fake compute-sanitizer: a test double) -----------------------------------

_FAKE = '''#!{python}
import json, sys, time
argv = sys.argv
stages = argv[argv.index("--stages") + 1].split(",")
stop, hang = {stop!r}, {hang!r}
print("========= COMPUTE-SANITIZER", flush=True)
for s in stages:
    print("{begin}" + json.dumps({{"stage": s, "kernels": ["k_" + s + "<float>"]}}), flush=True)
    if s == hang:
        time.sleep(60)
    if s == stop:
        print("========= Invalid __shared__ read of size 4 bytes")
        print("=========     at k_" + s + "<float>(float *)+0x10")
        sys.exit(1)
    print("{end}" + json.dumps({{"stage": s, "correct": True, "message": ""}}), flush=True)
print("========= ERROR SUMMARY: 0 errors")
'''


def _fake_tool(tmp_path: Path, stop: str = "", hang: str = "") -> str:
    path = tmp_path / "compute-sanitizer"
    path.write_text(_FAKE.format(python=sys.executable, stop=stop, hang=hang, begin=san.BEGIN, end=san.END))
    path.chmod(0o755)
    return str(path)


def test_a_stage_that_stops_its_child_is_a_finding_and_the_rest_run_in_a_fresh_one(tmp_path):
    exe = _fake_tool(tmp_path, stop="b")
    log = tmp_path / "memcheck.log"
    run, outs = san.run_tool(san.SanitizeJob(exe, "transpose", {"rows": 67, "cols": 133}, "float32",
                                             ["a", "b", "c"], 60), "memcheck", log)
    assert run.status == "ran" and run.processes == 2
    recs = {r["stage"]: r for r in san.stage_results(["a", "b", "c"], ["memcheck"], {"memcheck": run},
                                                      {"memcheck": outs})}
    assert recs["a"]["correct"] and recs["c"]["correct"] and recs["c"]["memcheck"] == "clean"
    assert not recs["b"]["correct"] and recs["b"]["first"].startswith("memcheck: Invalid __shared__ read")
    assert log.read_text().count("COMPUTE-SANITIZER") == 2  # both processes' raw output kept


def test_a_hung_stage_times_out_and_the_rest_are_not_run(tmp_path):
    exe = _fake_tool(tmp_path, hang="b")
    run, outs = san.run_tool(san.SanitizeJob(exe, "transpose", {"rows": 67, "cols": 133}, "float32",
                                             ["a", "b", "c"], 3), "synccheck")
    assert run.status == "timed out"
    recs = {r["stage"]: r for r in san.stage_results(["a", "b", "c"], ["synccheck"], {"synccheck": run},
                                                      {"synccheck": outs})}
    assert recs["a"]["correct"]
    assert not recs["b"]["correct"] and "did not finish" in recs["b"]["synccheck"]
    assert recs["c"]["synccheck"].startswith("not run (timed out") and recs["c"]["correct"] and not recs["c"]["checked"]


def test_a_tool_that_fails_before_any_stage_is_failed_not_clean(tmp_path):
    exe = tmp_path / "compute-sanitizer"
    exe.write_text("#!/bin/sh\necho '========= Error: No attachable process found'\nexit 1\n")
    exe.chmod(0o755)
    run, outs = san.run_tool(san.SanitizeJob(str(exe), "transpose", {"rows": 67, "cols": 133}, "float32", ["a"], 30),
                             "memcheck")
    assert run.status == "failed" and "exit 1" in run.note
    rec = san.stage_results(["a"], ["memcheck"], {"memcheck": run}, {"memcheck": outs})[0]
    assert rec["memcheck"].startswith("not run (failed")


# -- finding it; the run flag ------------------------------------------------------------------


def test_found_on_path_and_by_its_variable(tmp_path):
    exe = _fake_tool(tmp_path)
    assert san.find_sanitizer({"PATH": str(tmp_path)}, globs=()) == exe
    assert san.find_sanitizer({"COMPUTE_SANITIZER": exe}, globs=()) == exe
    assert san.find_sanitizer({}, globs=()) is None


def test_default_runs_it_where_it_exists_and_says_not_available_elsewhere(monkeypatch):
    monkeypatch.setattr(san, "SANITIZER_GLOBS", ())
    assert san.resolve(None, {}) == (None, f"not available ({san.NOT_FOUND})")
    assert san.resolve(False, {}) == (None, "off (--no-sanitize)")
    with pytest.raises(SanitizerNotFoundError) as exc:
        san.resolve(True, {})
    assert exc.value.exit_code == 11 and "--no-sanitize" in exc.value.hint


def test_run_sanitize_without_the_tool_is_one_line_with_exit_11(monkeypatch, tmp_path, capsys):
    # A GPU (a test double) but no compute-sanitizer: without a GPU the run stops first at exit 8.
    from profiler_report.cli import entry

    install_fake_gpu(monkeypatch)
    monkeypatch.setattr(san, "SANITIZER_GLOBS", ())
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("COMPUTE_SANITIZER", raising=False)
    monkeypatch.setattr(sys, "argv", ["profiler-report", "run", "--no-counters", "--sanitize", "--no-peers",
                                      "--rows", "64", "--cols", "64", "--out", str(tmp_path / "r")])
    with pytest.raises(SystemExit) as exc:
        entry()
    err = capsys.readouterr().err
    assert exc.value.code == 11 and err.count("\n") == 1
    assert err.startswith("error: --sanitize: compute-sanitizer not found") and "(fix: " in err
    assert not (tmp_path / "r").exists()


# -- a finding marks the stage WRONG (the GPU and the tool are test doubles) ---------------------


def _doc(stages: list[str], bad: dict[str, str]) -> dict:
    runs = {t: san.ToolRun(t, processes=1, seconds=1.0) for t in san.TOOLS}
    def found(t: str) -> list[san.Finding]:
        return [san.Finding(t, s, line) for s, line in bad.items()] if t == "racecheck" else []

    outs = {t: [san.ToolOutput(t, errors=len(found(t)), begun=list(stages),
                               ended={s: {"stage": s, "correct": True} for s in stages}, findings=found(t))]
            for t in san.TOOLS}
    return {"schema": san.SCHEMA, "tool": "/fake/compute-sanitizer", "version": "2025.3.1.0",
            "tools": [vars(r) for r in runs.values()], "size": {"rows": 67, "cols": 133}, "size_text": "67x133",
            "dtype": "float32", "stages": san.stage_results(stages, san.TOOLS, runs, outs), "other": []}


def test_a_finding_marks_the_stage_wrong_untimed_and_stated_in_report_and_json(earlier, monkeypatch):
    from profiler_report.live import session
    from profiler_report.report.build import render_timings_only

    install_fake_gpu(monkeypatch)
    line = "Error: Race reported between Write access at transpose_smem<float>+0x100 and Read access at ..."
    monkeypatch.setattr(session.san, "resolve", lambda wanted: ("/fake/compute-sanitizer", ""))
    monkeypatch.setattr(session.san, "sanitize", lambda job, text, folder, **kw:
                        _doc(list(job.stages), {"smem": line}))
    cfg = RunConfig(size={"rows": 64, "cols": 64}, dtype="float32", counters=False)
    with pytest.raises(KernelIncorrectError, match="compute-sanitizer at 67x133"):
        live_run(cfg, earlier, render=render_timings_only)
    validation = {v["stage"]: v for v in json.loads((earlier / "validation.json").read_text())}
    assert not validation["smem"]["correct"] and "racecheck: Error: Race reported" in validation["smem"]["message"]
    assert validation["naive"]["correct"]
    timed = [t["name"] for t in json.loads((earlier / "timings.json").read_text())["timings"]]
    assert "smem" not in timed and "naive" in timed
    prov = json.loads((earlier / "provenance.json").read_text())
    # Every stage and the ceiling copy ran under the tool.
    ran = len(get_case("transpose").manifest.stages) + 1
    assert prov["sanitizer"].endswith(f"findings in 1 of {ran} stages (smem)")
    html = (earlier / "index.html").read_text()
    assert "compute-sanitizer 2025.3.1.0: memcheck, racecheck, synccheck at 67x133 float32" in html
    assert "compute-sanitizer: compute-sanitizer" not in html
    assert "racecheck: Error: Race reported between Write access at transpose_smem" in html
    assert "memcheck clean; racecheck clean; synccheck clean (at 67x133 float32)" in html  # naive's line
    summary = json.loads((earlier / "summary.json").read_text())["sanitizer"]
    assert summary["result"] == "findings"
    assert [s["stage"] for s in summary["stages"] if not s["correct"]] == ["smem"]


def test_no_sanitize_is_stated_in_provenance(earlier, monkeypatch):
    install_fake_gpu(monkeypatch)
    live_run(RunConfig(size={"rows": 64, "cols": 64}, dtype="float32", counters=False, sanitize=False), earlier)
    assert json.loads((earlier / "provenance.json").read_text())["sanitizer"] == "off (--no-sanitize)"
    assert not (earlier / "sanitizer.json").exists()


# -- report lines -------------------------------------------------------------------------------


def test_a_recorded_capture_without_results_reads_not_run(tmp_path):
    import profiler_report

    profiler_report.load(F32 / "profile.ncu-rep").render(tmp_path)
    html = (tmp_path / "index.html").read_text()
    assert "compute-sanitizer: not run." in html
    assert "<th>compute-sanitizer</th><td>not run</td>" in html  # the provenance row
    assert 'id="sanitizer"' not in html  # no per-stage table without results
    assert json.loads((tmp_path / "summary.json").read_text())["sanitizer"] == {"result": "not run"}


def test_texts_without_results():
    assert sanitizer_text(None) == "not run" and stage_text(None, "naive") == "not run"
    assert sanitizer_text(None, "off (--no-sanitize)") == "off (--no-sanitize)"
    assert summary_entry(None) == {"result": "not run"}


def test_sanitizer_json_of_the_wrong_shape_is_one_input_error(tmp_path):
    from profiler_report.capture.sidecars import read_sidecars
    from profiler_report.errors import InputError

    (tmp_path / "sanitizer.json").write_text(json.dumps({"stages": [{"stage": "a"}]}))
    with pytest.raises(InputError, match="not a sanitizer.json written by profiler-report"):
        read_sidecars(tmp_path)



@pytest.mark.parametrize("tools", [[{"status": "ran"}], [1, "x", None], [{"tool": 3, "status": "ran"}]])
def test_sanitizer_json_with_a_malformed_tool_is_one_input_error(tmp_path, tools):
    # These reached the page's provenance line and crashed it (KeyError, TypeError: exit 70).
    from profiler_report.capture.sidecars import read_sidecars
    from profiler_report.errors import InputError

    doc = json.loads((Path(__file__).resolve().parents[2] / "reports" / "h200" / "sanitizer.json").read_text())
    doc["tools"] = tools
    (tmp_path / "sanitizer.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="tools, each with tool and status"):
        read_sidecars(tmp_path)


def test_the_broken_case_folder_loads_with_its_three_stages():
    from profiler_report.model.registry import get_case

    case = get_case(str(BROKEN))
    assert case.manifest.stage_ids() == ["padded", "nosync", "barrier_in_bounds"]
    assert case.sanitize_size() == {"rows": 67, "cols": 133}
    assert os.path.basename(case.manifest.source) == "broken.cu"
