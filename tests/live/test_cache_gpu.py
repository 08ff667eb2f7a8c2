"""GPU tests of the result cache in a live run and of run's configuration choice (marker ``gpu``;
skipped without a GPU, run on the device)."""

from __future__ import annotations

import json
import shutil

import pytest

from profiler_report.live.config import RunConfig
from profiler_report.model.registry import get_case

pytestmark = pytest.mark.gpu


def _ncu() -> str | None:
    from profiler_report.errors import NcuNotFoundError
    from profiler_report.live.ncu import find_ncu

    try:
        return find_ncu()
    except NcuNotFoundError:
        return None


def test_run_chooses_the_configuration_with_the_sweeps_rule():
    from profiler_report.cases.transpose.configs import config_stages

    case = get_case("transpose")
    stage = next(s for s in case.manifest.stages if s.launch == "vec_realigned")
    rec = case.choose_configs({"rows": 2049, "cols": 3001}, "float16", 20, stage)
    configs = {f"[{','.join(s.targs)}]" for s in config_stages(case, "float16")}
    assert rec is not None and rec["chosen"] in configs and rec["runner_up"] in configs
    assert rec["runner_up"] != rec["chosen"] and rec["candidates"] >= 2
    assert rec["chosen_us"] > 0 and rec["targs"] == rec["chosen"].strip("[]").split(",")
    if rec["chosen"] != rec["default"]:  # only beyond the spread: the default's median above the best's p90
        assert rec["default_us"] is None or rec["default_us"] > rec["chosen_p90_us"]


@pytest.mark.skipif(_ncu() is None, reason="needs Nsight Compute")
def test_a_second_run_reuses_every_capture_and_times_again(tmp_path, monkeypatch):
    from profiler_report.analysis.run import load_run
    from profiler_report.live.session import live_run

    monkeypatch.setenv("PROFILER_REPORT_CACHE", str(tmp_path / "cache"))
    cfg = RunConfig(size={"rows": 1024, "cols": 1024}, stages=["naive", "smem"], sanitize=False)
    live_run(cfg, tmp_path / "a")
    live_run(cfg, tmp_path / "b")
    doc = json.loads((tmp_path / "b" / "reuse.json").read_text())
    assert {(r["what"], r["stage"]) for r in doc["reused"]} >= {("profile", "naive"), ("profile", "smem"),
                                                                ("profile", "copy"), ("validation", "naive")}
    assert doc["retimed"] == ["memcpy", "naive", "smem", "copy"]
    a, b = (load_run(tmp_path / d / "profile.ncu-rep") for d in "ab")
    assert a.stages() == b.stages() and a.capture.metrics.equals(b.capture.metrics)  # the same counters
    ta = {t["name"]: t for t in json.loads((tmp_path / "a" / "timings.json").read_text())["timings"]}
    tb = {t["name"]: t for t in json.loads((tmp_path / "b" / "timings.json").read_text())["timings"]}
    assert ta.keys() == tb.keys() and any(ta[n]["median_us"] != tb[n]["median_us"] for n in ta)  # timed again
    # --fresh: nothing reused, every stage profiled again
    shutil.rmtree(tmp_path / "b")
    live_run(RunConfig(**{**cfg.__dict__, "fresh": True}), tmp_path / "b")
    assert json.loads((tmp_path / "b" / "reuse.json").read_text())["reused"] == []
