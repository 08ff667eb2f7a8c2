"""The transpose bench's sweep logic on the CPU: bench_size's real code path (inputs, poisoned
outputs, bit-exact checks, configuration choice, ceilings) with numpy standing in for CuPy and
Python functions for the kernels. Every time here is a test value chosen per kernel (marked in
the fake), never a measurement; the real sweep is `profiler-report bench` (scripts/device/sweep13.sh)."""

from __future__ import annotations

import math

import pytest
from fakes import NumpyCupy

from profiler_report.analysis.ceilings import point_ceiling
from profiler_report.cases.transpose import bench
from profiler_report.cases.transpose import configs as transpose_configs
from profiler_report.cases.transpose.bench import TransposeRow
from profiler_report.cases.transpose.launch import realigned_rows_fit
from profiler_report.live import bench as harness
from profiler_report.live import kernels as kmod
from profiler_report.model.registry import get_case

CASE = get_case("transpose")


class _Module:
    """A "compiled module": each name expression is a Python kernel that records its launch."""

    def __init__(self, calls: list[str], wrong: set[str]) -> None:
        self.calls, self.wrong = calls, wrong

    def get_function(self, name: str):
        def kernel(grid, block, args, shared_mem=0):
            src, dst = args[0], args[1]
            self.calls.append(name)
            if name in self.wrong:
                dst.fill(0)
            elif name.startswith("copy"):
                dst.reshape(-1)[:] = src.reshape(-1)
            else:
                dst[...] = src.T
        kernel.max_dynamic_shared_size_bytes = 0
        return kernel


def _install(monkeypatch, times: dict[str, float], l2_bytes: int, wrong: set[str] = frozenset()) -> list[str]:
    """bench on numpy: ``times`` maps a name expression prefix (or "memcpy") to the test median
    in us (p10/p90 about median -/+ 0.16); the longest matching prefix wins."""
    calls: list[str] = []
    np_cupy = NumpyCupy()
    monkeypatch.setattr(bench, "import_cupy", lambda: np_cupy)
    monkeypatch.setattr(bench, "device_info", lambda: {"l2_bytes": l2_bytes})
    monkeypatch.setattr(kmod, "resident_blocks", lambda cupy, fn, threads, shared: 132)
    monkeypatch.setattr(kmod, "import_cupy", lambda: np_cupy)
    monkeypatch.setattr(bench, "compile_module",
                        lambda case, dtype, options=(), extra=(): (_Module(calls, set(wrong)),
                                                                   kmod._names(case, dtype, extra)))

    def memcpy(cupy):
        def fn(src, dst):
            calls.append("memcpy")
            dst.reshape(-1)[:] = src.reshape(-1)
        return fn

    def event_times_us(fn, pairs, repeats, warmup):
        fn(*pairs[0])
        name = calls[-1]
        best = max((k for k in times if name.startswith(k)), key=len, default=None)
        med = times[best] if best else 20.0
        # Test values, not measurements: evenly spread over med -/+ 0.2 (p10/p90 about -/+ 0.16).
        return [med + 0.2 * (2 * i / (repeats - 1) - 1) for i in range(repeats)]

    monkeypatch.setattr(harness, "memcpy_fn", memcpy)
    monkeypatch.setattr(harness, "event_times_us", event_times_us)
    return calls


def _rows(rows: list[TransposeRow], kind: str) -> list[TransposeRow]:
    return [r for r in rows if r.kind == kind]


#: The stage whose configuration the sweep chooses (vec_realigned), the manifest's configuration
#: of it and another candidate (the one made fastest below).
CHOSEN = next(s for s in CASE.manifest.stages if s.launch == transpose_configs.CONFIG_LAUNCH)
DEFAULT = CHOSEN.targs
OTHER = next(tuple(map(str, c)) for c in transpose_configs.CONFIGS if tuple(map(str, c)) != DEFAULT)


def _expr(targs: tuple[str, ...]) -> str:
    return f"{CHOSEN.kernel}<float,{','.join(targs)}>"


def _cfg(targs: tuple[str, ...]) -> str:
    return f"[{','.join(targs)}]"


TIMES = {"memcpy": 10.0, "copy": 10.5, "transpose": 12.0, _expr(DEFAULT): 11.0, _expr(OTHER): 10.6}


def test_every_candidate_is_timed_and_the_fastest_beyond_the_spread_runs(monkeypatch):
    _install(monkeypatch, TIMES, l2_bytes=0)
    rows = bench.bench_size(CASE, 33, 65, "float32", repeats=20, warmup=1, buffers=1, with_peers=False, configs=True)
    configs = _rows(rows, "config")
    taken = [c for c in transpose_configs.CONFIGS if realigned_rows_fit(c[0], 4)]  # float32
    assert [r.config for r in configs] == [_cfg(tuple(map(str, c))) for c in taken]
    assert [r.config for r in configs if r.chosen] == [_cfg(OTHER)]  # default's median 11.0 above 10.76
    (stage,) = [r for r in rows if r.name == CHOSEN.id]
    assert stage.kind == "stage" and stage.config == _cfg(OTHER) and stage.median_us == pytest.approx(10.6)
    assert "median is above its p90" in stage.note
    # The manifest's stage is not timed twice: its configuration is one of the candidates.
    assert sum(r.name.startswith(CHOSEN.id) and r.kind == "stage" for r in rows) == 1


@pytest.mark.parametrize(("dtype", "taken", "left_out"), [("float16", ("[20,16,512]", "[24,16,512]", "[8,16,256]"), ()),
                                                        ("float32", ("[24,16,512]", "[8,16,256]"), ("[20,16,512]",)),
                                                        ("float64", (), ("[20,16,512]", "[24,16,512]", "[8,16,256]"))])
def test_candidates_are_the_tile_rows_the_kernel_takes_for_the_dtype(dtype, taken, left_out):
    names = [s.id.split(" ", 1)[1] for s in transpose_configs.config_stages(CASE, dtype)]
    assert all(t in names for t in taken) and not any(t in names for t in left_out)
    assert len(names) == len(set(names)) > 8


def test_a_default_whose_median_is_past_the_fastests_p90_gives_way_though_its_p10_is_not(monkeypatch):
    times = {**TIMES, _expr(DEFAULT): 10.9}  # default's p10 10.74 <= fastest's p90 10.76 < its median 10.9
    _install(monkeypatch, times, l2_bytes=0)
    rows = bench.bench_size(CASE, 33, 65, "float32", repeats=20, warmup=1, buffers=1, with_peers=False, configs=True)
    default = next(r for r in rows if r.config == _cfg(DEFAULT) and r.kind == "config")
    fastest = next(r for r in rows if r.config == _cfg(OTHER) and r.kind == "config")
    assert default.p10_us <= fastest.p90_us < default.median_us
    assert next(r for r in rows if r.name == CHOSEN.id).config == _cfg(OTHER)


def test_the_default_is_kept_within_the_spread_and_a_wrong_candidate_never_wins(monkeypatch):
    bad_cfg = next(tuple(map(str, c)) for c in transpose_configs.CONFIGS if tuple(map(str, c)) not in (DEFAULT, OTHER))
    times = {**TIMES, _expr(DEFAULT): 10.75, _expr(bad_cfg): 1.0}  # default's median 10.75 <= fastest's p90 10.76
    _install(monkeypatch, times, l2_bytes=0, wrong={_expr(bad_cfg)})
    rows = bench.bench_size(CASE, 31, 65, "float32", repeats=20, warmup=1, buffers=1, with_peers=False, configs=True)
    stage = next(r for r in rows if r.name == CHOSEN.id)
    assert stage.config == _cfg(DEFAULT) and "default" in stage.note
    bad = next(r for r in rows if r.config == _cfg(bad_cfg))
    assert bad.note.startswith("WRONG") and math.isnan(bad.gbps) and not bad.chosen


def test_dram_points_are_judged_against_memcpy_and_l2_points_against_the_fastest_copy(monkeypatch):
    times = {**TIMES, "copy_wide<float,uint2": 9.0}  # a copy kernel faster than memcpy (as in L2 on the H200)
    _install(monkeypatch, times, l2_bytes=0)
    dram = bench.bench_size(CASE, 32, 64, "float32", repeats=20, warmup=1, buffers=1, with_peers=False)
    assert {r.resident for r in dram} == {"DRAM"} and {r.ceiling for r in dram} == {"memcpy"}
    assert all(r.pct_of_point_ceiling == pytest.approx(r.pct) for r in dram if r.gbps == r.gbps)
    _install(monkeypatch, times, l2_bytes=1 << 30)
    l2 = bench.bench_size(CASE, 32, 64, "float32", repeats=20, warmup=1, buffers=1, with_peers=False)
    assert {r.resident for r in l2} == {"L2"}
    assert {r.ceiling for r in l2} == {"L2 ceiling: copy 8B x2"}
    stage = next(r for r in l2 if r.name == "naive")
    assert stage.pct == pytest.approx(100 * 10 / 12, rel=1e-3)
    assert stage.pct_of_point_ceiling == pytest.approx(75.0, rel=1e-3)


def test_a_row_faster_than_memcpy_at_a_dram_point_is_flagged(monkeypatch):
    _install(monkeypatch, {**TIMES, "transpose_naive": 5.0}, l2_bytes=0)
    rows = bench.bench_size(CASE, 32, 64, "float32", repeats=20, warmup=1, buffers=1, with_peers=False)
    flagged = [r.name for r in rows if "SUSPECT" in r.note]
    assert flagged == ["naive"]


def test_point_ceiling_ignores_wrong_and_untimed_copies():
    rows = [{"name": "memcpy", "kind": "ceiling", "gbps": 100.0, "resident": "L2"},
            {"name": "copy 16B x1", "kind": "ceiling", "gbps": 150.0, "resident": "L2", "note": "WRONG: x"},
            {"name": "copy 8B x2", "kind": "ceiling", "gbps": float("nan"), "resident": "L2"},
            {"name": "vec", "kind": "stage", "gbps": 200.0, "resident": "L2"}]
    assert point_ceiling(rows) == ("L2 ceiling: memcpy", 100.0)
    assert point_ceiling(rows[1:3]) is None


def test_sweep_points_time_every_peer_and_candidate_at_every_size_and_dtype():
    points = CASE.sweep_points("transpose", quick=False, repeats=30)
    sweep = [p for p in points if p.unit == "sweep"]
    assert all(p.peers for p in sweep)
    got = {(p.dims["rows"], p.dims["cols"], p.dtype) for p in sweep}
    for r, c in ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907), (16384, 16384), (8192, 4096),
                 (8192, 8192), (1024, 1024), (1000, 3000)):
        assert {(r, c, dt) for dt in ("float16", "float32", "float64")} <= got
    assert len(got) == len(sweep)  # one point per size and dtype: no mixing of two memcpy timings


def test_the_sweep_table_names_the_configuration_that_ran(monkeypatch):
    from dataclasses import replace

    from profiler_report.analysis.sweeps import stage_label, sweep_table, sweep_verdicts

    _install(monkeypatch, TIMES, l2_bytes=0)
    rows = bench.bench_size(CASE, 33, 65, "float32", repeats=20, warmup=1, buffers=1, with_peers=False, configs=True)
    stage = next(r for r in rows if r.name == CHOSEN.id)
    peer = replace(stage, name="a peer (test value)", kind="peer", config="", median_us=10.0, p10_us=9.9, p90_us=10.1,
                   gbps=stage.gbps * 1.06)
    table = sweep_table([r.to_dict() for r in [*rows, peer]])
    (row,) = table.to_dict("records")
    assert stage_label(row) == f"{CHOSEN.id} {_cfg(OTHER)}" and row["ceiling"] == "memcpy"
    assert row["vs_peer"] == pytest.approx(1 / 1.06)
    assert f"a peer (test value) is faster than {CHOSEN.id}" in sweep_verdicts(table)[1]
    assert "by 6.0 %" in sweep_verdicts(table)[1] and "beyond the spread" in sweep_verdicts(table)[1]


def test_a_suspect_fastest_peer_is_named_in_the_sweep_verdicts(monkeypatch):
    from dataclasses import replace

    from profiler_report.analysis.sweeps import sweep_table, sweep_verdicts

    _install(monkeypatch, TIMES, l2_bytes=0)
    rows = bench.bench_size(CASE, 33, 65, "float32", repeats=20, warmup=1, buffers=1, with_peers=False)
    memcpy = rows[0]
    peer = replace(memcpy, name="a peer (test value)", kind="peer", median_us=5.0, p10_us=4.9, p90_us=5.1,
                   gbps=memcpy.gbps * 2, note="")
    bench.flag_faster_than_memcpy([memcpy, peer])
    assert "SUSPECT" in peer.note
    verdicts = sweep_verdicts(sweep_table([r.to_dict() for r in [*rows, peer]]))
    assert any("a peer (test value), is faster than memcpy" in v and "suspect" in v for v in verdicts)


def test_the_clock_warm_up_keeps_the_sms_busy_for_its_seconds_then_syncs(monkeypatch):
    # A sweep point starts with this (and a peer whose first call built a kernel): copies between
    # the first pair's buffers until the time is up, each batch waited for.
    import numpy as np

    cp = NumpyCupy()
    syncs = []
    cp.cuda.runtime.deviceSynchronize = lambda: syncs.append(1)
    clock = iter(np.arange(0.0, 10.0, 0.1))
    monkeypatch.setattr(bench.time, "perf_counter", lambda: float(next(clock)))
    src, dst = np.arange(12.0).reshape(3, 4), np.zeros((4, 3))
    bench.warm_sm_clocks(cp, [(src, dst)], seconds=0.35)
    assert (dst.reshape(-1) == src.reshape(-1)).all()
    assert len(syncs) == 3  # end = 0.0 + 0.35: batches at t = 0.1, 0.2, 0.3; t = 0.4 stops


def test_every_pair_writes_one_output_while_the_inputs_differ():
    # The peers' memory pools give them one recycled output block; the bench's kernels get the same.
    pairs = bench.make_pairs(CASE, NumpyCupy(), 31, 65, "float32", 3)
    assert len(pairs) == 3
    assert all(dst is pairs[0][1] for _, dst in pairs)
    assert pairs[0][1].shape == (65, 31)
    srcs = [src for src, _ in pairs]
    assert all(s.shape == (31, 65) for s in srcs)
    assert not (srcs[0] == srcs[1]).all() and not (srcs[1] == srcs[2]).all()


def test_pairs_can_keep_an_output_each_as_the_recorded_experiments_ran():
    pairs = bench.make_pairs(CASE, NumpyCupy(), 31, 65, "float32", 3, shared_output=False)
    outs = [dst for _, dst in pairs]
    assert len({id(o) for o in outs}) == 3 and all(o.shape == (65, 31) for o in outs)


def test_run_chooses_with_the_sweeps_rule_and_names_the_runner_up(monkeypatch):
    # Test values: OTHER 10.6 us beats the default's 11.0 beyond the spread; every other candidate 12.0.
    _install(monkeypatch, TIMES, l2_bytes=0)
    monkeypatch.setattr(bench, "warm_sm_clocks", lambda cupy, pairs: None)
    rec = CASE.choose_configs({"rows": 33, "cols": 65}, "float32", 20, CHOSEN)
    assert rec is not None and rec["chosen"] == _cfg(OTHER) and tuple(rec["targs"]) == OTHER
    assert rec["chosen_us"] == pytest.approx(10.6) and rec["runner_up"] == _cfg(DEFAULT)
    assert rec["runner_up_us"] == pytest.approx(11.0) and rec["default_us"] == pytest.approx(11.0)
    assert rec["candidates"] == len([c for c in transpose_configs.CONFIGS if realigned_rows_fit(c[0], 4)])
    assert "median is above its p90" in rec["how"]
    assert CASE.has_config_candidates(CHOSEN, "float32")
    assert not CASE.has_config_candidates(CASE.manifest.stages[0], "float32")


def test_run_keeps_the_default_within_the_spread(monkeypatch):
    _install(monkeypatch, {**TIMES, _expr(OTHER): 10.9}, l2_bytes=0)  # 10.9 vs 11.0: within p10-p90
    monkeypatch.setattr(bench, "warm_sm_clocks", lambda cupy, pairs: None)
    rec = CASE.choose_configs({"rows": 33, "cols": 65}, "float32", 20, CHOSEN)
    assert rec is not None and rec["chosen"] == rec["default"] == _cfg(DEFAULT)
    assert rec["runner_up"] == _cfg(OTHER)
