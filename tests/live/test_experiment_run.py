"""The live side of a case's experiments: the ncu command, the target's modes, the files written
(ncu replaced by shell scripts that print what ncu prints, as in test_driver.py)."""

from __future__ import annotations

import json

import pytest
from conftest import F32
from fakes import NCU_CONNECTED, fake_ncu_printing, fake_ncu_writing, install_fake_gpu

from profiler_report.cases.transpose.padding_sweep import EXPERIMENT
from profiler_report.live.config import RunConfig
from profiler_report.live.ncu import NcuCommand
from profiler_report.live.ncu_steps import Profiling, profile_experiments
from profiler_report.live.target import _parse
from profiler_report.model.experiment import RESULT_PREFIX
from profiler_report.model.registry import get_case
from profiler_report.util.timer import StepTimer

CASE = get_case("transpose")


def test_the_experiment_collects_only_its_metrics():
    cmd = NcuCommand(ncu="ncu", export=F32 / "x", target=["t"], section_set="", extra=list(EXPERIMENT.ncu_options),
                     ranges=[EXPERIMENT.range_name("transpose", p) for p in EXPERIMENT.point_ids()])
    argv = cmd.argv()
    assert "--set" not in argv and argv[argv.index("--section") + 1] == "SourceCounters"
    metrics = argv[argv.index("--metrics") + 1].split(",")
    assert "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" in metrics and len(metrics) == 5
    assert argv[argv.index("--clock-control") + 1] == "none"
    assert argv.count("--nvtx-include") == 20 and "pr_transpose.padding_sweep.f64_bx16_pad4/" in argv
    assert NcuCommand(ncu="ncu", export=F32 / "x", target=["t"]).argv()[1:3] == ["--set", "full"]


def test_the_target_modes_need_their_options():
    assert _parse(["experiment", "--experiment", "padding_sweep"]).experiment == "padding_sweep"
    with pytest.raises(SystemExit):
        _parse(["experiment"])
    with pytest.raises(SystemExit):
        _parse(["profile", "--dtype", "float32"])


def test_the_points_and_their_validation_are_written(tmp_path, monkeypatch):
    install_fake_gpu(monkeypatch)
    points = [{"point": p, "correct": True, "message": ""} for p in EXPERIMENT.point_ids()]
    ncu = fake_ncu_writing(tmp_path / "bin", F32 / "profile.ncu-rep",
                           [NCU_CONNECTED, RESULT_PREFIX + json.dumps(points)])
    out = tmp_path / "run"
    out.mkdir()
    profile_experiments(CASE, RunConfig(), Profiling(str(ncu), out, StepTimer(progress=False), {}))
    meta = json.loads((out / "padding_sweep.json").read_text())
    assert meta["points"] == points and meta["error"] == "" and meta["clock_control"] == "none"
    assert "SourceCounters" in meta["ncu_options"]
    assert (out / "padding_sweep.ncu-rep").is_file() and (out / "padding_sweep.log").is_file()


def test_a_failed_experiment_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    install_fake_gpu(monkeypatch)
    ncu = fake_ncu_printing(tmp_path / "bin", [NCU_CONNECTED, "==ERROR== An error was reported by the driver"], 9)
    out = tmp_path / "run"
    out.mkdir()
    profile_experiments(CASE, RunConfig(), Profiling(str(ncu), out, StepTimer(progress=False), {}))
    meta = json.loads((out / "padding_sweep.json").read_text())
    assert meta["points"] == [] and "ncu exited with status 9" in meta["error"]
    assert not (out / "padding_sweep.ncu-rep").exists()
