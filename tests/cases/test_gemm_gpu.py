"""GPU tests of the GEMM (marker ``gpu``; skipped without a GPU, run on the device): every stage,
every swept tile shape and the cuBLAS ceiling within gamma_K * (|A| |B|) of the float64 product
at odd sizes, tile multiples and the headline size; a poisoned output never passes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from profiler_report.model.registry import get_case

CASE = get_case("gemm")

pytestmark = pytest.mark.gpu

#: (M, N, K): below one tile, odd (no tile or vector multiple), K not a multiple of 4, tile
#: multiples, rectangular, the headline.
SIZES = [(1, 1, 1), (67, 133, 67), (1000, 1000, 1000), (4095, 4097, 1000), (4097, 4095, 999), (128, 256, 64),
         (2048, 512, 1024), (4096, 4096, 4096)]


@pytest.fixture(scope="module")
def kernels():
    from profiler_report.cases.gemm.bench import SHAPES
    from profiler_report.live.kernels import Kernels, compile_module

    last = CASE.manifest.stages[-1]
    extra = tuple(replace(last, id=f"shape{i}", targs=tuple(map(str, s))) for i, s in enumerate(SHAPES))
    module, names = compile_module(CASE, "float32", extra=extra)
    return Kernels(module, names, "float32", CASE), extra


@pytest.mark.parametrize("mnk", SIZES, ids=lambda s: "x".join(map(str, s)))
def test_every_stage_is_right(kernels, mnk):
    from profiler_report.live.kernels import validate

    k, _ = kernels
    size = dict(zip(("m", "n", "k"), mnk, strict=True))
    for st in (*CASE.manifest.stages, CASE.manifest.ceiling):
        v = validate(k, st, size, seed=sum(mnk))
        assert v.correct, v.message


@pytest.mark.parametrize("mnk", [(4095, 4097, 1000), (1000, 1000, 1000), (4096, 4096, 4096)],
                         ids=lambda s: "x".join(map(str, s)))
def test_every_swept_shape_is_right(kernels, mnk):
    from profiler_report.live.kernels import validate

    k, extra = kernels
    size = dict(zip(("m", "n", "k"), mnk, strict=True))
    for st in extra:
        v = validate(k, st, size, seed=3)
        assert v.correct, f"{st.targs}: {v.message}"


def test_an_unwritten_output_fails():
    import cupy

    size = {"m": 64, "n": 64, "k": 64}
    a = CASE.make_input(cupy, size, "float32", seed=1)
    out = CASE.make_output(cupy, CASE.manifest.stages[0], size, "float32")
    out.view(cupy.uint8).fill(0xFF)
    got = CASE.compare(cupy, out, CASE.reference(cupy, CASE.manifest.stages[0], a))
    assert not got.ok and got.mismatches == 64 * 64 and got.first_wrong == (0, 0)
