"""examples/softmax/case.py on the CPU (numpy in CuPy's place): its bfloat16 storage, its
float64 reference and its stated bounds. The eager stage's bfloat16 rounding is emulated here
operation by operation, as PyTorch eager rounds each result (the values are test inputs, not
measurements): the bound must admit it and refuse a softmax that is wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fakes import NumpyCupy

from profiler_report.model.registry import get_case

ROOT = Path(__file__).resolve().parents[2]
CASE = get_case(str(ROOT / "examples" / "softmax"))
SIZE = {"rows": 64, "cols": 4096}
STAGE = CASE.manifest.stage("eager")


def _bf16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = x.astype(np.float32).view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def _words(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def test_bfloat16_input_is_rounded_to_nearest_and_stored_as_words():
    cupy = NumpyCupy()
    words = CASE.make_input(cupy, SIZE, "bfloat16", seed=3)
    f32 = CASE.make_input(cupy, SIZE, "float32", seed=3)
    assert words.dtype == np.uint16 and words.shape == (64, 4096)
    assert np.array_equal(words, _words(_bf16(f32)))
    assert CASE.work(STAGE, SIZE, "bfloat16").bytes_moved == 2 * 64 * 4096 * 2


def test_the_bfloat16_bound_admits_eager_rounding_and_refuses_a_wrong_softmax():
    cupy = NumpyCupy()
    words = CASE.make_input(cupy, SIZE, "bfloat16", seed=5)
    x = (words.astype(np.uint32) << 16).view(np.float32)
    m = x.max(axis=1, keepdims=True)
    e = _bf16(np.exp(_bf16(x - m)))  # x - m rounded, then exp rounded: one bfloat16 result per operation
    eager = _bf16(e / _bf16(e.sum(axis=1, keepdims=True, dtype=np.float32)))
    ref = CASE.reference(cupy, STAGE, words)
    assert CASE.compare(cupy, _words(eager), ref).ok
    wrong = _bf16(e / _bf16(e.sum(axis=1, keepdims=True, dtype=np.float32) * 1.1))  # off by 10 %
    got = CASE.compare(cupy, _words(wrong), ref)
    assert not got.ok and got.mismatches > 0 and len(got.first_wrong) == 2


def test_float32_bound_and_the_copy_compared_bit_for_bit():
    cupy = NumpyCupy()
    x = CASE.make_input(cupy, SIZE, "float32", seed=7)
    ref = CASE.reference(cupy, STAGE, x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert CASE.compare(cupy, (e / e.sum(axis=1, keepdims=True)).astype(np.float32), ref).ok
    poisoned = np.full_like(x, np.nan)
    assert CASE.compare(cupy, poisoned, ref).mismatches == x.size  # NaN never passes
    copy = CASE.manifest.ceiling
    assert CASE.compare(cupy, x.copy(), CASE.reference(cupy, copy, x)).ok
    flipped = x.copy()
    flipped[3, 5] = np.nextafter(flipped[3, 5], np.float32(np.inf))
    assert CASE.compare(cupy, flipped, CASE.reference(cupy, copy, x)).first_wrong == (3, 5)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_outputs_hold_the_runs_storage(dtype):
    out = CASE.make_output(NumpyCupy(), STAGE, SIZE, dtype)
    assert out.shape == (64, 4096) and out.dtype == (np.float32 if dtype == "float32" else np.uint16)
