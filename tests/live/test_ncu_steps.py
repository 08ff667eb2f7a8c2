"""live/ncu_steps.py without a GPU: the captures' read ahead kept only where a step runs beside
it (the ncu runs themselves: tests/live/test_session.py and test_experiment_run.py, with a fake ncu)."""

from __future__ import annotations

import pytest

from profiler_report.live.config import RunConfig
from profiler_report.util.timer import StepTimer


@pytest.mark.parametrize(("ran", "peers_next", "kept"),
                         [(True, False, True), (False, True, True), (False, False, False)])
def test_the_captures_read_ahead_is_kept_only_where_it_runs_beside_a_step(monkeypatch, tmp_path, ran, peers_next,
                                                                          kept):
    from profiler_report.live import ncu_steps
    from profiler_report.live.cache import RunCache
    from profiler_report.model.registry import get_case

    child, joins = object(), []
    monkeypatch.setattr(ncu_steps, "read_ahead", lambda captures: child)
    monkeypatch.setattr(ncu_steps, "join", lambda proc, timeout_s: joins.append((proc, timeout_s)))
    monkeypatch.setattr(ncu_steps, "profile_experiments", lambda *a: ran)
    monkeypatch.setattr(ncu_steps.reuse, "profile", lambda *a: None)
    case = get_case("transpose")
    job = ncu_steps.Profiling("ncu", tmp_path, StepTimer(progress=False), {}, True)
    cfg = RunConfig(size={"rows": 64, "cols": 64}, dtype="float32")
    got = ncu_steps.profile_good(RunCache(None, {}, ""), cfg, case, list(case.manifest.stages), job, peers_next)
    assert (got is child) == kept and joins == ([] if kept else [(child, 0.0)])  # stopped, not waited for
