"""The bf16 GEMM case's host side: manifest, launch shapes, work model, the padded TN buffers,
and the reference and comparison (run on NumPy in CuPy's place: the same array calls) that every
stage and peer is validated with."""

from __future__ import annotations

import types

import numpy as np
import pytest

from profiler_report.cases.hgemm import bf16_words, dims_of, views, words_to_float64
from profiler_report.cases.hgemm import launch as geo
from profiler_report.cases.hgemm.bench import SWEEP_SIZES, sweep_points
from profiler_report.live.cache import COMPILE_OPTIONS, compile_options, stage_key
from profiler_report.model.registry import get_case
from profiler_report.util.dtypes import ALL_CXX_TYPES

CASE = get_case("hgemm")
#: NumPy standing in for CuPy: the case's reference and comparison use only calls both have.
NP = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("_")}, asnumpy=np.asarray)


def test_manifest_is_the_ladder_and_cublas_is_a_library_ceiling():
    assert [s.id for s in CASE.manifest.stages] == ["mma_sync", "wgmma", "wide_tile", "mma_in_flight", "tma_loads",
                                                    "tile_order", "warp_specialized", "persistent"]
    ceiling = CASE.manifest.ceiling
    assert ceiling.id == "cublas" and ceiling.launch == "library" and ceiling.kernel == ""
    assert CASE.work_unit == "TFLOP/s" and CASE.summary_columns[0] == "event_tflops"
    assert CASE.dtypes == ("bfloat16",) and CASE.default_dtype == "bfloat16" and ALL_CXX_TYPES["bfloat16"]
    assert CASE.default_size == {"m": 8192, "n": 8192, "k": 8192}


def test_the_case_compiles_for_sm90a_and_the_cache_key_says_so():
    assert CASE.nvrtc_options == ("-arch=sm_90a",)
    assert compile_options(CASE) == (*COMPILE_OPTIONS, "-arch=sm_90a")
    assert compile_options(get_case("gemm"), ("-DX",)) == (*COMPILE_OPTIONS, "-DX")  # other cases: unchanged
    machine = {"gpu": "H200"}
    key = stage_key(CASE, CASE.manifest.stages[1], {"m": 64, "n": 64, "k": 64}, "bfloat16", machine, "code")
    assert "-arch=sm_90a" in key["options"]


@pytest.mark.parametrize("mnk", [(4095, 4097, 1000), (8192, 8192, 8192), (1, 1, 1)])
def test_launch_shapes_cover_c_and_fit_shared_memory(mnk):
    m, n, k = mnk
    size = {"m": m, "n": n, "k": k}
    tiles = {}
    for st in CASE.manifest.stages:
        shape = CASE.launch(st, size, "bfloat16")
        bm, bn = geo.TILES[st.launch]
        tiles[st.id] = (-(-n // bn), -(-m // bm))
        assert shape.block == ((384,) if st.launch in ("specialized", "persistent") else (256,))
        assert shape.shared_bytes <= geo.MAX_SHARED
        if st.launch == "persistent":  # as many blocks as the GPU holds, at most one per tile
            assert shape.grid == (0,) and shape.extra_blocks is not None
            ntiles = tiles[st.id][0] * tiles[st.id][1]
            assert shape.extra_blocks(132) == min(132, ntiles) and shape.extra_blocks(10**6) == ntiles
            continue
        assert shape.grid == tiles[st.id] and shape.extra_blocks is None
        assert shape.grid[0] * bn >= n and shape.grid[1] * bm >= m
    wgmma, wide = CASE.manifest.stages[1:3]
    assert CASE.launch(wgmma, size, "bfloat16").shared_bytes == 4 * 32 * 1024 + 1024
    assert CASE.launch(wide, size, "bfloat16").shared_bytes == 4 * 48 * 1024 + 1024


def test_work_counts_two_flops_per_multiply_add_and_bf16_bytes():
    work = CASE.work(CASE.manifest.stages[0], {"m": 8192, "n": 8192, "k": 8192}, "bfloat16")
    assert work.flops == 2 * 8192**3 and work.bytes_moved == 3 * 8192 * 8192 * 2


@pytest.mark.parametrize("k", [1, 7, 8, 67, 1000])
def test_rows_are_padded_with_zeros_to_a_multiple_of_8(k):
    m, n = 5, 3
    buf = CASE.make_input(NP, {"m": m, "n": n, "k": k}, "bfloat16", seed=1)
    ld = geo.row_stride(k)
    assert ld % 8 == 0 and k <= ld < k + 8
    assert buf.dtype == np.uint16 and len(buf) == geo.input_words(m, n, k) and dims_of(NP, buf) == (m, n, k)
    assert geo.HEADER % 8 == 0 and geo.b_offset(m, k) % 64 == 0  # both matrices start 16-byte aligned
    a, b = views(buf, m, n, k)
    assert a.shape == (m, ld) and b.shape == (n, ld)
    assert not a[:, k:].any() and not b[:, k:].any()  # the padding: zeros
    vals = words_to_float64(NP, a[:, :k])
    assert vals.min() >= -1 and vals.max() <= 1 and vals.any()
    assert np.array_equal(words_to_float64(NP, bf16_words(NP, vals.astype(np.float32))), vals)  # exact bf16


def test_bf16_rounding_is_to_nearest_even():
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-9, -0.3, 2**-20], dtype=np.float32)
    got = words_to_float64(NP, bf16_words(NP, x))
    assert got.tolist()[:3] == [1.0, 1.0, 1 + 2**-6]  # ties to even at 2^-7 steps
    assert abs(got[4] + 0.3) <= 0.3 * 2**-8 and got[5] == 2**-20


@pytest.fixture(scope="module")
def product():
    m, n, k = 96, 80, 4096
    src = CASE.make_input(NP, {"m": m, "n": n, "k": k}, "bfloat16", seed=3)
    a, b = views(src, m, n, k)
    a32, b32 = (words_to_float64(NP, x[:, :k]).astype(np.float32) for x in (a, b))
    return a32, b32, CASE.reference(NP, CASE.manifest.stages[0], src)


def test_a_float32_accumulated_bf16_result_passes_in_any_order(product):
    a32, b32, ref = product
    assert CASE.compare(NP, bf16_words(NP, a32 @ b32.T).ravel(), ref).ok  # BLAS order
    blocked = np.zeros((96, 80), np.float32)
    for k in range(0, 4096, 64):  # one K tile at a time, as the kernels accumulate
        blocked = (blocked + a32[:, k:k + 64] @ b32[:, k:k + 64].T).astype(np.float32)
    assert CASE.compare(NP, bf16_words(NP, blocked).ravel(), ref).ok


def test_wrong_results_fail_with_where_and_what(product):
    a32, b32, ref = product
    c = a32 @ b32.T
    c[5, 7] += 1.0
    got = CASE.compare(NP, bf16_words(NP, c).ravel(), ref)
    assert not got.ok and got.mismatches == 1 and got.first_wrong == (5, 7)
    dropped = a32[:, 64:] @ b32[:, 64:].T  # one K tile of 64 missing
    assert CASE.compare(NP, bf16_words(NP, dropped).ravel(), ref).mismatches > 0.5 * dropped.size
    k_reversed = a32 @ b32[:, ::-1].T  # B's K order reversed: a mismatched operand
    assert not CASE.compare(NP, bf16_words(NP, k_reversed).ravel(), ref).ok
    poisoned = np.full(96 * 80, 0xFFFF, dtype=np.uint16)  # bf16 NaN
    assert CASE.compare(NP, poisoned, ref).mismatches == poisoned.size


def test_the_bound_is_the_accumulation_plus_one_bf16_rounding(product):
    _, _, ref = product
    assert np.all(ref.bound >= 2.0**-8 * np.abs(ref.value))
    assert np.all(ref.bound <= 2.0**-8 * np.abs(ref.value) + 4096 * 2.0**-22 * 4096)


def test_the_benchmark_sweeps_the_headline_first():
    quick = sweep_points(CASE, "hgemm", quick=True)
    assert [p.dims for p in quick] == [{"m": 8192, "n": 8192, "k": 8192}] and quick[0].dtype == "bfloat16"
    assert len(sweep_points(CASE, "hgemm")) == 1 + len(SWEEP_SIZES)
    assert CASE.bench_row_type().__name__ == "BenchRow"


def test_the_thresholds_parse():
    from profiler_report.gate.grammar import load_thresholds

    rules = load_thresholds(CASE.thresholds()).rules
    assert {r.stage for r in rules} == {s.id for s in CASE.manifest.stages}
