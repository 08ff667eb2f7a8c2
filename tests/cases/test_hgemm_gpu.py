"""GPU tests of the bf16 GEMM (marker ``gpu``; skipped without a GPU, run on the device): every
stage and the cuBLAS ceiling within the case's bound of the float64 product at odd sizes, tile
multiples and K past one tile by one; a poisoned output never passes."""

from __future__ import annotations

import pytest

from profiler_report.model.registry import get_case

CASE = get_case("hgemm")

pytestmark = pytest.mark.gpu

#: (M, N, K): below one tile, odd (no tile multiple, N odd: the 2-byte store path), K not a
#: multiple of 8 (the row padding), K one past a 64-deep tile, tile multiples (128 x 256 too),
#: rectangular, large.
SIZES = [(1, 1, 1), (67, 133, 67), (1000, 1000, 1000), (4095, 4097, 1000), (4097, 4095, 999), (130, 258, 65),
         (128, 256, 64), (256, 512, 192), (2048, 512, 1024), (4096, 4096, 4096)]


@pytest.fixture(scope="module")
def kernels():
    from profiler_report.live.kernels import Kernels, compile_module

    module, names = compile_module(CASE, "bfloat16")
    return Kernels(module, names, "bfloat16", CASE)


@pytest.mark.parametrize("mnk", SIZES, ids=lambda s: "x".join(map(str, s)))
def test_every_stage_is_right(kernels, mnk):
    from profiler_report.live.kernels import validate

    size = dict(zip(("m", "n", "k"), mnk, strict=True))
    for st in (*CASE.manifest.stages, CASE.manifest.ceiling):
        v = validate(kernels, st, size, seed=sum(mnk))
        assert v.correct, v.message


def test_an_unwritten_output_fails():
    import cupy

    size = {"m": 64, "n": 64, "k": 64}
    a = CASE.make_input(cupy, size, "bfloat16", seed=1)
    out = CASE.make_output(cupy, CASE.manifest.stages[0], size, "bfloat16")
    out.view(cupy.uint8).fill(0xFF)
    got = CASE.compare(cupy, out, CASE.reference(cupy, CASE.manifest.stages[0], a))
    assert not got.ok and got.mismatches == 64 * 64 and got.first_wrong == (0, 0)

