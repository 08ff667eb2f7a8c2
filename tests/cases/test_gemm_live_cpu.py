"""The GEMM's live run on the CPU stand-in (tests/fakes.py: NumPy for CuPy, Python functions for
the kernels, test values for the event times): the cuBLAS ceiling runs as a library call inside
the stage machinery, timings.json carries TFLOP/s from the case's work model, and the page's
summary shows them. No GPU measurement is made or implied."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fakes import NumpyCupy, install_numpy_gpu

from profiler_report.cases.gemm import views
from profiler_report.errors import KernelIncorrectError
from profiler_report.live.config import RunConfig
from profiler_report.live.session import live_run
from profiler_report.model.registry import get_case

CASE = get_case("gemm")
SIZE = {"m": 33, "n": 17, "k": 9}


def _product(grid, block, a, b, c, m, n, k):  # every stage's kernel, in Python: C = A B
    c[:] = (a @ b).ravel()


def _kernels(**override):
    names = {s.kernel: _product for s in CASE.manifest.stages}
    return {**names, **override}


def _cfg() -> RunConfig:
    return RunConfig(case="gemm", size=SIZE, counters=False, sanitize=False)


def test_live_run_validates_times_in_tflops_and_renders(tmp_path, monkeypatch):
    from profiler_report.report.build import render_timings_only

    install_numpy_gpu(monkeypatch, _kernels())
    dest = tmp_path / "report"
    monkeypatch.chdir(tmp_path)
    live_run(_cfg(), dest, render=lambda out: render_timings_only(out, case=CASE))
    validation = json.loads((dest / "validation.json").read_text())
    assert [(v["stage"], v["correct"]) for v in validation] == [(s.id, True) for s in CASE.manifest.stages] + [
        ("cublas", True)]
    timed = {t["name"]: t for t in json.loads((dest / "timings.json").read_text())["timings"]}
    assert set(timed) == {"memcpy", "cublas", *(s.id for s in CASE.manifest.stages)}
    flops = 2 * 33 * 17 * 9
    assert timed["warptile"]["tflops"] == pytest.approx(flops / (timed["warptile"]["median_us"] * 1e6))
    assert timed["memcpy"]["tflops"] == 0
    html = (dest / "index.html").read_text()
    assert "event-timed TFLOP/s" in html
    assert "The fastest stage, " in html and " TFLOP/s (100.0% of cublas)" in html


def test_a_wrong_stage_is_reported_wrong(tmp_path, monkeypatch, earlier):
    def off_by_one_column(grid, block, a, b, c, m, n, k):
        out = a @ b
        out[:, -1] = 0  # the last column never written right
        c[:] = out.ravel()

    install_numpy_gpu(monkeypatch, _kernels(gemm_vectorized=off_by_one_column))
    with pytest.raises(KernelIncorrectError) as exc:
        live_run(_cfg(), earlier, render=None)
    assert "stage vectorized is wrong at 33x17x9" in exc.value.message and "first at out[0, 16]" in exc.value.message


def test_views_split_the_input_as_the_kernels_read_it():
    buf = CASE.make_input(NumpyCupy(), SIZE, "float32", 5)
    a, b = views(buf, 33, 17, 9)
    assert np.shares_memory(a, buf) and np.shares_memory(b, buf) and not np.shares_memory(a, b)


def test_cupy_tf32_is_refused_with_its_fix(tmp_path, monkeypatch):
    from profiler_report.errors import InputError

    install_numpy_gpu(monkeypatch, _kernels())
    monkeypatch.setenv("CUPY_TF32", "1")
    src, out = CASE.make_input(NumpyCupy(), SIZE, "float32", 1), np.empty(33 * 17, np.float32)
    with pytest.raises(InputError) as exc:
        CASE.steps(CASE.manifest.ceiling, src, out, SIZE, "float32")
    assert "unset CUPY_TF32" in exc.value.hint
