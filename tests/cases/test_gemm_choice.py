"""``run``'s choice of the GEMM's warptile shape per size (CPU, the timing replaced by test values,
not measurements): the candidates are the manifest's shape and the sweep's, the fastest wins beyond
the run-to-run spread, the default is kept within it, a wrong candidate never wins, and the record
names the runner-up. The rule itself is the sweeps' (live.bench.choose_config)."""

from __future__ import annotations

import pytest

from profiler_report.cases.gemm import bench
from profiler_report.model.registry import get_case

CASE = get_case("gemm")
LAST = CASE.manifest.stages[-1]
SIZE = {"m": 4096, "n": 4096, "k": 4096}
DEFAULT = f"[{','.join(LAST.targs)}]"


def _install(monkeypatch, medians: dict[str, float], wrong: frozenset[str] = frozenset()) -> None:
    """Each candidate 'timed' at its test median (spread +-1 %), or reported WRONG."""
    monkeypatch.setattr(bench, "import_cupy", lambda: None)
    monkeypatch.setattr(bench, "compile_module", lambda case, dtype, extra=(): (None, {}))
    monkeypatch.setattr(bench, "_pairs", lambda case, size, buffers: [])

    def timed(t, name, kind, fn, note=""):
        config = name.split(" ", 1)[1]
        if config in wrong:
            return bench._row(CASE, name, kind, None, SIZE, "cuda-events", "WRONG: test double")
        med = medians.get(config, 1000.0)
        return bench._row(CASE, name, kind, [med * 0.99, med, med * 1.01] * 5, SIZE, "cuda-events")

    monkeypatch.setattr(bench, "_timed", timed)


def test_only_the_last_stage_has_candidates_and_its_own_shape_is_one():
    cands = bench.config_candidates(CASE, LAST, "float32")
    assert [c.targs for c in cands][0] == LAST.targs and len(cands) == len({c.targs for c in cands})
    assert {tuple(map(str, s)) for s in bench.SHAPES} <= {c.targs for c in cands}
    assert all(c.kernel == LAST.kernel and c.launch == LAST.launch for c in cands)
    assert bench.config_candidates(CASE, CASE.manifest.stages[0], "float32") == []
    assert CASE.has_config_candidates(LAST, "float32")
    assert not CASE.has_config_candidates(CASE.manifest.stages[3], "float32")


def test_the_fastest_shape_wins_beyond_the_spread(monkeypatch):
    other = "[256,128,8,64,64,4,8,4,256]"
    _install(monkeypatch, {DEFAULT: 900.0, other: 850.0})
    rec = CASE.choose_configs(SIZE, "float32", 20, LAST)
    assert rec["chosen"] == other and rec["targs"] == other.strip("[]").split(",")
    assert rec["chosen_us"] == pytest.approx(850.0) and rec["runner_up"] == DEFAULT
    assert rec["default_us"] == pytest.approx(900.0) and rec["how"] == "the fastest median"
    assert rec["candidates"] == len(bench.config_candidates(CASE, LAST, "float32"))


def test_the_default_is_kept_within_the_spread(monkeypatch):
    other = "[256,128,8,64,64,4,8,4,256]"
    _install(monkeypatch, {DEFAULT: 900.0, other: 898.0})
    rec = CASE.choose_configs(SIZE, "float32", 20, LAST)
    assert rec["chosen"] == DEFAULT and rec["runner_up"] == other
    assert "within the run-to-run spread of the fastest " + other in rec["how"]


def test_a_wrong_candidate_never_wins_and_none_right_is_no_choice(monkeypatch):
    other = "[256,128,8,64,64,4,8,4,256]"
    _install(monkeypatch, {DEFAULT: 900.0, other: 10.0}, wrong=frozenset({other}))
    assert CASE.choose_configs(SIZE, "float32", 20, LAST)["chosen"] == DEFAULT
    everything = frozenset(c.id.split(" ", 1)[1] for c in bench.config_candidates(CASE, LAST, "float32"))
    _install(monkeypatch, {}, wrong=everything)
    assert CASE.choose_configs(SIZE, "float32", 20, LAST) is None
