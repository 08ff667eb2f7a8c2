"""cases.reduction on CPU: the manifest, the passes and scratch regions of every stage, the
float32 error bound, the comparison, and an nvcc compile check of every kernel."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from profiler_report.cases.reduction import PARTIALS
from profiler_report.cases.reduction import launch as geo
from profiler_report.errors import InputError
from profiler_report.model.manifest import stage_sources
from profiler_report.model.registry import get_case
from profiler_report.util.dtypes import ALL_CXX_TYPES
from test_kernels import _ptxas, _require_nvcc

CASE = get_case("reduction")
M = CASE.manifest
#: numpy standing in for cupy: the case's host-side code uses the API both share.
NP = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("_")}, asnumpy=np.asarray)

SIZES = [1, 7, 255, 256, 257, 513, 1000, 100_003, 2**20 + 3, 2**28]


def test_manifest_lists_harris_ladder_and_ceiling():
    assert M.stage_ids() == ["interleaved_divergent", "interleaved_strided", "sequential", "first_add",
                             "warp_shuffle", "unrolled", "grid_stride", "vec4", "one_pass", "one_pass_deep"]
    assert M.ceiling.op == "read"
    assert set(stage_sources(M.source_text())) == {*M.stage_ids(), M.ceiling.id}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("stage", [*M.stages, M.ceiling], ids=lambda s: s.id)
def test_steps_cover_every_pass_and_end_in_out0(stage, n):
    inputs, out = np.zeros(n, np.float32), CASE.make_output(NP, stage, {"n": n}, "float32")
    steps = CASE.steps(stage, inputs, out, {"n": n}, "float32")
    kernels = [s for s in steps if s.zero is None]
    assert sum(s.profiled for s in kernels) == 1 and kernels[0].profiled
    count = n
    for step in kernels:
        src, dst, got_n = step.args
        assert int(got_n) == count and src.size >= count
        assert step.launch.grid[0] == geo.blocks(stage, M, count)
        if step is kernels[-1]:
            # the last pass writes the result; the one-pass stage's partials sit at out[64:]
            assert dst.__array_interface__["data"][0] == out.__array_interface__["data"][0]
            if stage.launch == "one_pass":
                assert out.size >= PARTIALS + step.launch.grid[0]
        else:
            assert dst.size >= step.launch.grid[0]
            assert not np.shares_memory(src, dst) and not np.shares_memory(dst, out[:PARTIALS])
        count = step.launch.grid[0]
    assert len(kernels) == len(geo.passes(stage, M, n))


def test_grid_stride_stages_use_the_manifest_grid():
    st = M.stage("grid_stride")
    assert CASE.launch(st, {"n": 2**28}, "float32").grid == (M.params["grid_blocks"],)
    assert CASE.launch(st, {"n": 100}, "float32").grid == (1,)
    assert CASE.launch(M.stage("first_add"), {"n": 2**28}, "float32").grid == (2**28 // 512,)


def test_work_counts_bytes_read():
    assert CASE.work(M.stages[0], {"n": 2**28}, "float32").bytes_moved == 2**30


def test_size_limits():
    with pytest.raises(InputError, match="2\\^31"):
        CASE.size({"n": 2**31})
    with pytest.raises(InputError):
        CASE.check_dtype("float64")


def test_int32_reference_wraps_like_the_gpu():
    x = np.full(4, 2**30, np.int32)  # 2^32: wraps to 0
    ref = CASE.reference(NP, M.stages[0], x)
    assert int(ref.value) == 0 and ref.bound == 0.0
    out = np.array([0, 9, 9], np.int32)
    assert CASE.compare(NP, out, ref).ok
    out[0] = 1
    got = CASE.compare(NP, out, ref)
    assert not got.ok and got.expected == "0" and got.got == "1"


def test_float32_bound_follows_chain_length():
    rng = np.random.default_rng(0)
    x = (rng.random(2**20, dtype=np.float32) + 1)
    for st in M.stages:
        ref = CASE.reference(NP, st, x)
        h = geo.chain_length(st, M, x.size)
        total = float(x.sum(dtype=np.float64))
        assert ref.chain == h and math.isclose(ref.bound, h * 2**-24 / (1 - h * 2**-24) * total)
    # a sequential float32 sum is within the bound of its own chain (n), a tree's result far inside
    seq = np.float32(0)
    for v in x[:4096]:
        seq = np.float32(seq + v)
    n = 4096
    bound = n * 2**-24 * float(x[:n].sum(dtype=np.float64))
    assert abs(float(seq) - float(x[:n].sum(dtype=np.float64))) <= bound


def test_float32_compare_rejects_nan_and_outside_bound():
    x = np.ones(1000, np.float32)
    ref = CASE.reference(NP, M.stage("vec4"), x)
    out = np.full(70, np.nan, np.float32)
    assert not CASE.compare(NP, out, ref).ok  # the poisoned, unwritten result
    out[0] = 1000.0
    assert CASE.compare(NP, out, ref).ok
    out[0] = 1000.0 + 2 * ref.bound + 1e-3
    assert not CASE.compare(NP, out, ref).ok


def test_read_ceiling_reference_is_the_xor_of_words():
    x = np.arange(1, 10, dtype=np.int32)
    ref = CASE.reference(NP, M.ceiling, x)
    want = 0
    for v in range(1, 10):
        want ^= v
    assert int(ref.value) == want
    assert CASE.compare(NP, np.array([want, 0], np.int32), ref).ok
    assert not CASE.compare(NP, np.array([want ^ 1, 0], np.int32), ref).ok


def test_inputs_are_never_zero():
    for dtype in CASE.dtypes:
        x = CASE.make_input(NP, {"n": 100_000}, dtype, seed=3)
        assert x.dtype == np.dtype(dtype) and x.size == 100_000 and not (x == 0).any()


def test_every_reduction_kernel_compiles_for_sm90(tmp_path):
    nvcc = _require_nvcc()
    lines = [f'#include "{M.source}"']
    stages = [*M.stages, M.ceiling]
    for dtype in CASE.dtypes:
        ctype = ALL_CXX_TYPES[dtype]
        lines += [f"template __global__ void {s.name_expression(ctype)}(const {ctype}*, {ctype}*, unsigned int);"
                  for s in stages]
    log = _ptxas(nvcc, tmp_path / "reduction.cu", lines)
    assert "error" not in log.lower()
    assert "spill" not in log.replace("0 bytes spill", "")
    for s in stages:
        assert s.kernel in log
