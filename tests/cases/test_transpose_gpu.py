"""GPU tests (marker ``gpu``; skipped without a GPU, run on the device): correctness of every variant."""

from __future__ import annotations

import pytest

from profiler_report.model.registry import get_case

CASE = get_case("transpose")

pytestmark = pytest.mark.gpu

SIZES = [(1000, 3000), (4097, 33), (33, 4097), (1, 1), (31, 65), (2048, 2048)]


@pytest.fixture(scope="module", params=["float32", "float64", "float16"])
def kernels(request):
    from profiler_report.live.kernels import Kernels, compile_module

    module, names = compile_module(CASE, request.param)
    return CASE.manifest, Kernels(module, names, request.param, CASE)


@pytest.mark.parametrize(("rows", "cols"), SIZES)
def test_every_variant_is_exact(kernels, rows, cols):
    from profiler_report.live.kernels import validate

    manifest, k = kernels
    for st in (*manifest.stages, manifest.ceiling, manifest.regression):
        v = validate(k, st, {"rows": rows, "cols": cols}, seed=rows + cols)
        assert v.correct, v.message


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_bench_copies_and_swept_shapes_are_exact(dtype):
    # The bench times these too; each must be exact before its speed means anything.
    from profiler_report.cases.transpose.bench import COPIES
    from profiler_report.cases.transpose.configs import shape_stages
    from profiler_report.live.kernels import Kernels, compile_module, validate

    extra = (*COPIES, *shape_stages(CASE, dtype))
    module, names = compile_module(CASE, dtype, extra=extra)
    k = Kernels(module, names, dtype, CASE)
    for st in extra:
        for rows, cols in ((1000, 3000), (4097, 33), (257, 129)):
            v = validate(k, st, {"rows": rows, "cols": cols}, seed=rows)
            assert v.correct, v.message


def test_a_wrong_kernel_is_caught():
    from dataclasses import replace

    from profiler_report.live.kernels import Kernels, compile_module, validate

    manifest = CASE.manifest
    module, names = compile_module(CASE, "float32")
    k = Kernels(module, names, "float32", CASE)
    # The copy kernel launched as if it were a transpose: the validator must name the first wrong index.
    wrong = replace(manifest.ceiling, op="transpose")
    v = validate(k, wrong, {"rows": 64, "cols": 96})
    assert not v.correct
    assert v.first_wrong is not None
    assert "first at out[" in v.message


def test_timing_is_sane():
    from profiler_report.live.kernels import Kernels, compile_module, time_stages

    manifest = CASE.manifest
    module, names = compile_module(CASE, "float32")
    k = Kernels(module, names, "float32", CASE)
    t = time_stages(k, [manifest.stages[-1]], {"rows": 2048, "cols": 2048}, repeats=20, warmup=2, buffers=2)
    assert [x.name for x in t] == ["memcpy", manifest.stages[-1].id]
    assert all(x.p10_us <= x.median_us <= x.p90_us for x in t)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_candidate_configurations_are_exact_at_odd_shapes(dtype):
    # The sweep times vec_realigned at each candidate; each must be exact before its speed means anything.
    from profiler_report.cases.transpose.configs import config_stages
    from profiler_report.live.kernels import Kernels, compile_module, validate

    extra = tuple(config_stages(CASE, dtype))
    module, names = compile_module(CASE, dtype, extra=extra)
    k = Kernels(module, names, dtype, CASE)
    for st in extra:
        for rows, cols in ((1, 1), (31, 65), (4097, 33), (7919, 127), (257, 129), (131, 999)):
            v = validate(k, st, {"rows": rows, "cols": cols}, seed=rows)
            assert v.correct, v.message


def test_a_sweep_point_chooses_a_configuration_and_no_peer_beats_memcpy():
    # One real "sweep" point at a DRAM-sized odd shape in float64 (where JAX once cast to float32):
    # every configuration exact, the chosen one named, and no row faster than memcpy beyond the spread.
    from profiler_report.cases.transpose.bench import bench_size
    from profiler_report.cases.transpose.configs import CONFIG_LAUNCH

    rows = bench_size(CASE, 4097, 8191, "float64", repeats=20, configs=True)
    assert {r.resident for r in rows} == {"DRAM"} and {r.ceiling for r in rows} == {"memcpy"}
    configs = [r for r in rows if r.kind == "config"]
    assert configs and not [r.name for r in configs if r.note.startswith("WRONG")]
    assert sum(r.chosen for r in configs) == 1
    chosen = next(s for s in CASE.manifest.stages if s.launch == CONFIG_LAUNCH)
    stage = next(r for r in rows if r.name == chosen.id)
    assert stage.config == next(r.config for r in configs if r.chosen)
    assert not [r.name for r in rows if "SUSPECT" in r.note]
    assert not [r.name for r in rows if "TimingError" in r.note], "a peer could not be timed behind a hold"
    jax = next(r for r in rows if r.name == "jax.jit transpose")
    assert jax.timing in ("wall-clock", "skipped"), jax.note
