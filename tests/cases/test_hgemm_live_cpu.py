"""The bf16 GEMM's live run on the CPU stand-in (tests/fakes.py: NumPy for CuPy, Python functions
for the kernels, test values for the event times; the torch ceiling replaced by the same NumPy
product): the bfloat16 dtype goes through validation and timing, the kernels receive the padded
TN buffers, and a wrong stage is reported wrong. No GPU measurement is made or implied."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fakes import install_numpy_gpu

from profiler_report.cases.hgemm import HgemmCase, bf16_words, tma, views, words_to_float64
from profiler_report.errors import KernelIncorrectError
from profiler_report.live import kernels as kmod
from profiler_report.live.config import RunConfig
from profiler_report.live.session import live_run
from profiler_report.model.base import Step
from profiler_report.model.registry import get_case

CASE = get_case("hgemm")
SIZE = {"m": 33, "n": 17, "k": 9}


def _product(grid, block, a, b, c, m, n, k, ld):  # every stage's kernel, in Python: C = A B^T
    assert ld % 8 == 0 and a.shape == (m, ld) and b.shape == (n, ld) and not a[:, k:].any()
    a64, b64 = words_to_float64(np, a), words_to_float64(np, b)  # the padding adds zero products
    c[:] = bf16_words(np, (a64 @ b64.T).astype(np.float32)).ravel()


def _install(monkeypatch, **override):
    install_numpy_gpu(monkeypatch, {**{s.kernel: _product for s in CASE.manifest.stages}, **override})
    # The TMA stages' tensor maps: the driver encodes them on a GPU machine; here the Python kernel
    # gets the operand itself (tests/cases/test_hgemm_tma.py checks the encoding's arguments).
    monkeypatch.setattr(tma, "encode", lambda operand, box_rows: operand)
    # The persistent stage's grid: the blocks an H200 holds at once (132 SMs, one block each).
    monkeypatch.setattr(kmod, "resident_blocks", lambda cupy, fn, threads, shared: 132)
    library = HgemmCase.steps

    def steps(self, stage, inputs, output, size, dtype):
        if stage.launch != "library":
            return library(self, stage, inputs, output, size, dtype)
        a, b = views(inputs, size["m"], size["n"], size["k"])
        return [Step(call=lambda: _product(None, None, a, b, output, size["m"], size["n"], size["k"], a.shape[1]))]

    monkeypatch.setattr(HgemmCase, "steps", steps)


def _cfg() -> RunConfig:
    return RunConfig(case="hgemm", size=SIZE, dtype="bfloat16", counters=False, sanitize=False)


def test_live_run_validates_times_in_bfloat16_and_renders(tmp_path, monkeypatch):
    from profiler_report.report.build import render_timings_only

    _install(monkeypatch)
    dest = tmp_path / "report"
    monkeypatch.chdir(tmp_path)
    live_run(_cfg(), dest, render=lambda out: render_timings_only(out, case=CASE))
    validation = json.loads((dest / "validation.json").read_text())
    assert [(v["stage"], v["correct"], v["dtype"]) for v in validation] == [
        *((s.id, True, "bfloat16") for s in CASE.manifest.stages), ("cublas", True, "bfloat16")]
    timed = {t["name"]: t for t in json.loads((dest / "timings.json").read_text())["timings"]}
    assert set(timed) == {"memcpy", "cublas", *(s.id for s in CASE.manifest.stages)}
    assert timed["wgmma"]["tflops"] == pytest.approx(2 * 33 * 17 * 9 / (timed["wgmma"]["median_us"] * 1e6))
    html = (dest / "index.html").read_text()
    assert "event-timed TFLOP/s" in html and "(100.0% of cublas)" in html


def test_a_wrong_stage_is_reported_wrong(tmp_path, monkeypatch, earlier):
    def last_column_unwritten(grid, block, a, b, c, m, n, k, ld):
        _product(grid, block, a, b, c, m, n, k, ld)
        c.reshape(m, n)[:, -1] = 0

    _install(monkeypatch, hgemm_wgmma=last_column_unwritten)
    with pytest.raises(KernelIncorrectError) as exc:
        live_run(_cfg(), earlier, render=None)
    assert "stage wgmma is wrong at 33x17x9" in exc.value.message and "first at out[0, 16]" in exc.value.message
