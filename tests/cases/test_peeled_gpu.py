"""GPU tests (marker ``gpu``): the every-shape stages ``vec_peeled`` and ``vec_realigned`` bit for bit
at the odd shapes of issue 13, in every dtype and at several configurations each, plus an unaligned base
(a view one element in)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from profiler_report.cases.transpose.configs import MAX_DYNAMIC_SMEM
from profiler_report.cases.transpose.launch import dynamic_smem_bytes, realigned_splits, realigned_tail_split
from profiler_report.model.registry import get_case

CASE = get_case("transpose")

pytestmark = pytest.mark.gpu

#: Odd and prime shapes: 1x1, a tile edge in both directions, rows of 4097, 8191x8193, prime x prime;
#: and bottom tiles of 1, 3 and 5 rows (vec_realigned's halo runs past the matrix in the tile above).
SHAPES = [(1, 1), (31, 65), (4097, 33), (4097, 8191), (8191, 8193), (7919, 7907), (131, 999), (257, 129),
          (261, 37)]
#: Per stage: the manifest's configuration and the smallest one; for vec_realigned also three with
#: two output passes per warp (the ones whose last wave is split), two of 16 chunk rows and two
#: double-buffered ones of several tiles per block (the bench's candidates are also checked at every
#: sweep point before they are timed, and by tests/cases/test_transpose_gpu.py).
CONFIGS = {"vec_peeled": [(32, 16, 512), (32, 8, 256)],
           "vec_realigned": [(32, 16, 512), (32, 8, 256), (32, 16, 256), (32, 32, 512), (16, 16, 256), (16, 8, 256),
                             (16, 16, 512), (32, 16, 512, 2), (16, 8, 256, 3)]}


@pytest.fixture(scope="module", params=[(d, s) for d in ("float16", "float32", "float64")
                                        for s in ("vec_peeled", "vec_realigned")])
def peeled(request):
    from profiler_report.live.kernels import Kernels, compile_module

    dtype, launch = request.param
    base = next(s for s in CASE.manifest.stages if s.launch == launch)
    stages = [replace(base, id=f"{base.id} {c}", targs=tuple(str(x) for x in c)) for c in CONFIGS[launch]]
    stages = [s for s in stages if dynamic_smem_bytes(s, dtype) <= MAX_DYNAMIC_SMEM]
    module, names = compile_module(CASE, dtype, extra=tuple(stages))
    return Kernels(module, names, dtype, CASE), stages


@pytest.mark.parametrize(("rows", "cols"), SHAPES)
def test_every_shape_stages_are_exact_at_odd_shapes(peeled, rows, cols):
    from profiler_report.live.kernels import validate

    k, stages = peeled
    for st in stages:
        v = validate(k, st, {"rows": rows, "cols": cols}, seed=rows ^ cols)
        assert v.correct, v.message


def test_every_shape_stages_are_exact_on_an_unaligned_base(peeled):
    # A view one element into its allocation: the kernel's element path, checked like the rest.
    from profiler_report.live.gpu import import_cupy, poison

    cupy = import_cupy()
    k, stages = peeled
    rows, cols = 67, 133
    big = CASE.make_input(cupy, {"rows": 1, "cols": rows * cols + 1}, k.dtype, seed=7).ravel()
    src = big[1:].reshape(rows, cols)
    dst_big = cupy.empty(rows * cols + 1, dtype=k.dtype)
    dst = dst_big[1:].reshape(cols, rows)
    for st in stages:
        poison(cupy, dst)
        k.launch(st, src, dst, {"rows": rows, "cols": cols})
        cupy.cuda.runtime.deviceSynchronize()
        assert CASE.compare(cupy, dst, cupy.ascontiguousarray(src.T)).ok, st.id


@pytest.mark.parametrize("split", ["every tile", "none"])
@pytest.mark.parametrize(("rows", "cols"), SHAPES)
def test_vec_realigned_is_exact_with_every_tile_split_and_with_none(peeled, rows, cols, split):
    # The GPU's own rule splits some tiles at some shapes; here the resident blocks it is given force
    # every tile narrow (more than twice the tiles) or none (1: no remainder).
    from profiler_report.live.kernels import kernel_key, validate

    k, stages = peeled
    size = {"rows": rows, "cols": cols}
    splitting = [s for s in stages if realigned_splits(s)]
    if not splitting:
        pytest.skip("vec_peeled's tiles are never split")
    for st in splitting:
        launch = CASE.launch(st, size, k.dtype)
        key = (kernel_key(st), launch.block[0], launch.shared_bytes)
        k.resident[key] = 4 * launch.grid[0] + 2 if split == "every tile" else 1
        try:
            v = validate(k, st, size, seed=rows * 3 + cols)
        finally:
            del k.resident[key]
        assert v.correct, f"{split} split: {v.message}"


def test_a_split_launch_adds_the_rules_blocks_for_the_gpus_resident_ones(peeled):
    from profiler_report.live.gpu import import_cupy

    cupy = import_cupy()
    k, stages = peeled
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    splitting = [s for s in stages if realigned_splits(s)]
    if not splitting:
        pytest.skip("vec_peeled's tiles are never split")
    for st in splitting:
        launch = CASE.launch(st, {"rows": 4097, "cols": 8191}, k.dtype)
        fn = k.module.get_function(k.names[(st.kernel, st.targs)])
        if launch.shared_bytes > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = launch.shared_bytes
        grid = k.grid(st, launch, fn)
        resident = next(v for key, v in k.resident.items() if key[0] == (st.kernel, st.targs))
        assert resident >= sms and resident % sms == 0
        assert grid == (launch.grid[0] + realigned_tail_split(launch.grid[0], resident),)
