"""The padding sweep on the GPU: every point compiles with NVRTC and transposes bit for bit."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


def test_every_point_is_correct():
    from profiler_report.cases.transpose.padding_sweep import EXPERIMENT, POINTS
    from profiler_report.model.registry import get_case

    results = EXPERIMENT.run_target(get_case("transpose"))
    assert [r["point"] for r in results] == [p.id for p in POINTS]
    assert all(r["correct"] for r in results), [r for r in results if not r["correct"]]
