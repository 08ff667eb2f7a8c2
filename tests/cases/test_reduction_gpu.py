"""GPU tests of the reduction (marker ``gpu``; skipped without a GPU, run on the device): every
stage and the read ceiling right at every n, int32 bit-exact, float32 within the stated bound."""

from __future__ import annotations

import pytest

from profiler_report.model.registry import get_case

CASE = get_case("reduction")

pytestmark = pytest.mark.gpu

#: n below one block, at and around block and vector multiples, primes, past the 60 MB L2.
SIZES = [1, 3, 255, 256, 257, 511, 1025, 4099, 65_537, 1_000_003, 2**24 + 7, 2**26]


@pytest.fixture(scope="module", params=CASE.dtypes)
def kernels(request):
    from profiler_report.live.kernels import Kernels, compile_module

    module, names = compile_module(CASE, request.param)
    return Kernels(module, names, request.param, CASE)


@pytest.mark.parametrize("n", SIZES)
def test_every_stage_is_right(kernels, n):
    from profiler_report.live.kernels import validate

    for st in (*CASE.manifest.stages, CASE.manifest.ceiling):
        v = validate(kernels, st, {"n": n}, seed=n)
        assert v.correct, v.message


def test_every_swept_configuration_is_right():
    from dataclasses import replace

    from profiler_report.cases.reduction.bench import LOADS, THREADS, with_grid
    from profiler_report.live.kernels import Kernels, compile_module, validate

    last = CASE.manifest.stages[-1]
    variants = [replace(last, targs=(str(t), str(n))) for t in THREADS for n in LOADS]
    for dtype in CASE.dtypes:
        module, names = compile_module(CASE, dtype, extra=tuple(variants))
        for blocks in (1, 264, 2112):
            k = Kernels(module, names, dtype, with_grid(CASE, blocks))
            for st in variants:
                for n in (5, 70_001, 2**22 + 1):
                    v = validate(k, st, {"n": n}, seed=blocks)
                    assert v.correct, f"{st.targs} {blocks} blocks: {v.message}"


def test_a_wrong_stage_is_caught():
    from dataclasses import replace

    from profiler_report.live.kernels import Kernels, compile_module, validate

    module, names = compile_module(CASE, "int32")
    k = Kernels(module, names, "int32", CASE)
    # The one-element stage launched with half the blocks (as if each thread added two elements):
    # half the input is never read, so the int32 sum must differ.
    wrong = replace(CASE.manifest.stage("sequential"), launch="first_add")
    v = validate(k, wrong, {"n": 10_000})
    assert not v.correct and "expected" in v.message
