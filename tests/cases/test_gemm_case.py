"""The GEMM case's host side: manifest, launch shapes, work model, buffer layout, and the
reference and comparison (run on NumPy in CuPy's place: the same array calls) that every stage
and peer is validated with."""

from __future__ import annotations

import types

import numpy as np
import pytest

from profiler_report.cases.gemm import launch as geo
from profiler_report.cases.gemm import views
from profiler_report.cases.gemm.bench import SHAPES, BenchRow, config_verdicts, table
from profiler_report.model.registry import get_case

CASE = get_case("gemm")
#: NumPy standing in for CuPy: the case's reference and comparison use only calls both have.
NP = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("_")}, asnumpy=np.asarray)


def test_manifest_is_the_ladder_and_cublas_is_a_library_ceiling():
    ids = [s.id for s in CASE.manifest.stages]
    assert ids == ["naive", "coalesced", "shared_tiles", "blocktile_1d", "blocktile_2d", "vectorized", "conflict_free",
                   "warptile"]
    ceiling = CASE.manifest.ceiling
    assert ceiling.id == "cublas" and ceiling.launch == "library" and ceiling.kernel == ""
    assert CASE.work_unit == "TFLOP/s" and CASE.summary_columns[0] == "event_tflops"


def test_launch_shapes_cover_c():
    size = {"m": 4095, "n": 4097, "k": 1000}
    for st in CASE.manifest.stages:
        shape = CASE.launch(st, size, "float32")
        if st.launch == "block":
            bm, bn, threads = geo.block_shape(st)
            assert shape.block == (threads,) and shape.grid == (-(-4097 // bn), -(-4095 // bm))
        else:
            rows, cols = (shape.grid[0], shape.grid[1]) if st.launch == "naive" else (shape.grid[1], shape.grid[0])
            assert rows * 32 >= 4095 and cols * 32 >= 4097 and shape.block == (32, 32)
    for s in SHAPES:  # every swept shape: threads = warps x 32
        bm, bn, bk, wm, wn, *_rest, threads = s
        assert (bm // wm) * (bn // wn) * 32 == threads


def test_work_counts_two_flops_per_multiply_add():
    work = CASE.work(CASE.manifest.stages[0], {"m": 4096, "n": 4096, "k": 4096}, "float32")
    assert work.flops == 2 * 4096**3 and work.bytes_moved == 3 * 4096 * 4096 * 4


def test_input_layout_holds_the_sizes_and_aligned_matrices():
    size = {"m": 5, "n": 7, "k": 3}
    buf = CASE.make_input(NP, size, "float32", seed=1)
    assert buf.dtype == np.float32 and len(buf) == geo.input_words(5, 7, 3)
    assert buf[:3].tolist() == [5, 7, 3] and geo.b_offset(5, 3) % 64 == 0
    a, b = views(buf, 5, 7, 3)
    assert a.shape == (5, 3) and b.shape == (3, 7) and -1 <= a.min() and b.max() < 1 and a.any()


@pytest.fixture(scope="module")
def product():
    size = {"m": 96, "n": 80, "k": 4096}
    src = CASE.make_input(NP, size, "float32", seed=3)
    a, b = views(src, 96, 80, 4096)
    return src, a, b, CASE.reference(NP, CASE.manifest.stages[0], src)


def test_a_float32_product_passes_in_any_summation_order(product):
    src, a, b, ref = product
    assert CASE.compare(NP, (a @ b).ravel(), ref).ok  # BLAS order
    blocked = sum(a[:, k:k + 8] @ b[k:k + 8] for k in range(0, 4096, 8)).astype(np.float32)
    assert CASE.compare(NP, blocked.ravel(), ref).ok


def test_wrong_results_fail_with_where_and_what(product):
    src, a, b, ref = product
    c = (a @ b).ravel()
    c[5 * 80 + 7] += 1.0
    got = CASE.compare(NP, c, ref)
    assert not got.ok and got.mismatches == 1 and got.first_wrong == (5, 7)
    dropped = (a[:, 8:] @ b[8:]).ravel()  # one k-tile of 8 missing
    assert CASE.compare(NP, dropped, ref).mismatches > 0.5 * dropped.size  # 8 of 4096 terms: most elements
    poisoned = np.full(96 * 80, np.nan, dtype=np.float32)
    assert CASE.compare(NP, poisoned, ref).mismatches == poisoned.size


def _tf32(x):
    """float32 rounded to TF32's 10 mantissa bits (to nearest, ties to even)."""
    i = x.view(np.uint32).astype(np.uint64)
    return (((i + 0x0FFF + ((i >> 13) & 1)) & 0xFFFFE000).astype(np.uint32)).view(np.float32)


@pytest.mark.parametrize("k", [1, 67, 1000, 4096, 16384])
def test_float32_in_any_order_passes_and_tf32_fails(k):
    """The worst-case bound alone lets TF32 through at large K; the rms check (RMS_LIMIT_U) does
    not: float32 leaves about 0.5 u, TF32 46 u or more."""
    size = {"m": 40, "n": 24, "k": k}
    src = CASE.make_input(NP, size, "float32", seed=k)
    a, b = views(src, 40, 24, k)
    ref = CASE.reference(NP, CASE.manifest.stages[0], src)
    seq = np.zeros((40, 24), np.float32)
    for i in range(k):  # one thread's order: C += a[:, i] b[i, :], rounded each step
        seq = (seq + a[:, i:i + 1] * b[i:i + 1, :]).astype(np.float32)
    assert CASE.compare(NP, (a @ b).ravel(), ref).ok and CASE.compare(NP, seq.ravel(), ref).ok
    tf32 = (_tf32(a) @ _tf32(b)).ravel()
    got = CASE.compare(NP, tf32, ref)
    assert not got.ok
    if k >= 1000:  # inside the worst-case bound: only the rms check catches it
        assert "rms error" in got.expected


def test_bench_table_names_the_fastest_shape():
    def row(name, tflops, chosen, p10, p90):
        return BenchRow(name, "config", "4096x4096x4096", "float32", 1.0, p10, p90, tflops, 0.0, 100 * tflops / 50,
                        "cuda-events", chosen=chosen)
    rows = [row("warptile [a]", 45.0, True, 2.9, 3.1), row("warptile [b]", 47.0, False, 2.7, 2.8)]
    text = table(rows)
    assert "warptile [b]" in config_verdicts(rows)[0] and "slower beyond the spread" in text


def test_the_commands_read_the_benchmark_through_the_case():
    # `bench --case gemm` and the sweeps' point store go through Case.bench_* (the harness
    # interface): its rows come back from their JSON dicts, pass the store's row check, and print.
    import json

    from profiler_report.util.jsonable import check_record

    case = get_case("gemm")
    row = BenchRow("warptile", "stage", "4096x4096x4096", "float32", 3.0, 2.9, 3.1, 45.8, 134.2, 91.0,
                   "cuda-events", chosen=True)
    stored = json.loads(json.dumps(row.to_dict()))
    check_record(case.bench_row_type(), stored)
    assert case.bench_rows([stored]) == [row]
    assert "45.80" in case.bench_table([row]) and case.bench_json([row], {})["rows"] == [stored]
