"""kernels: every stage compiles with nvcc for sm_90 in every dtype, without register spills."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from profiler_report.cases import get_case
from profiler_report.cases.manifest import load_manifest, stage_sources
from profiler_report.cases.transpose.bench import COPIES, shape_stages
from profiler_report.util.dtypes import CXX_TYPES

NVCC = shutil.which("nvcc")
TRANSPOSE_DTYPES = get_case("transpose").dtypes


def _require_nvcc() -> str:
    if NVCC is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc is not on PATH on the CI machine")
        pytest.skip("nvcc not installed")
    return NVCC


@pytest.fixture(scope="module")
def ptxas_log(tmp_path_factory):
    nvcc = _require_nvcc()
    manifest = load_manifest()
    stages = [*manifest.stages, manifest.ceiling, manifest.regression, *COPIES]
    kernels = [s.kernel for s in stages]
    lines = [f'#include "{manifest.source}"']
    for ctype in (CXX_TYPES[d] for d in TRANSPOSE_DTYPES):
        for st in stages:
            lines.append(f"template __global__ void {st.name_expression(ctype)}(const {ctype}*, {ctype}*, int, int);")
    return _ptxas(nvcc, tmp_path_factory.mktemp("nvcc") / "instantiate.cu", lines), kernels


def _ptxas(nvcc: str, src, lines: list[str]) -> str:
    src.write_text("\n".join(lines) + "\n")
    res = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-lineinfo", "-Xptxas", "-v", "-o",
                          str(src.with_suffix(".cubin")), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stderr


def test_every_kernel_compiles_for_sm90(ptxas_log):
    log, kernels = ptxas_log
    entries = re.findall(r"Compiling entry function '(\w+)'", log)
    assert len(entries) == len(kernels) * len(TRANSPOSE_DTYPES)
    for k in kernels:
        assert sum(k in e for e in entries) >= len(TRANSPOSE_DTYPES), k


def test_no_register_spills(ptxas_log):
    log, _ = ptxas_log
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills
    assert all(s == ("0", "0") for s in spills), spills


def test_every_swept_tile_shape_compiles(tmp_path):
    # The bench's block-shape sweep instantiates vec_tuned at each shape: all must build for sm_90.
    # (Some float16 shapes with one micro-block per thread spill a few bytes; the sweep times them anyway.)
    nvcc = _require_nvcc()
    manifest = load_manifest()
    lines = [f'#include "{manifest.source}"']
    n = 0
    for dtype, ctype in ((d, CXX_TYPES[d]) for d in TRANSPOSE_DTYPES):
        for st in shape_stages(get_case("transpose"), dtype):
            lines.append(f"template __global__ void {st.name_expression(ctype)}(const {ctype}*, {ctype}*, int, int);")
            n += 1
    log = _ptxas(nvcc, tmp_path / "shapes.cu", lines)
    assert len(re.findall(r"Compiling entry function '_Z19transpose_vec_tuned", log)) == n > 40


def test_every_padding_sweep_point_compiles(tmp_path):
    # The padding-sweep experiment instantiates one kernel per (element size, blockDim.x, pad).
    from profiler_report.cases.transpose.padding_sweep import POINTS, SOURCE, name_expression

    nvcc = _require_nvcc()
    lines = [f'#include "{SOURCE}"']
    for p in POINTS:
        ctype = p.ctype
        lines.append(f"template __global__ void {name_expression(p)}(const {ctype}*, {ctype}*, int, int);")
    log = _ptxas(nvcc, tmp_path / "sweep.cu", lines)
    assert len(re.findall(r"Compiling entry function '_Z19transpose_pad_sweep", log)) == len(POINTS) == 20
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills and all(s == ("0", "0") for s in spills), spills


def test_each_stage_has_marked_source():
    manifest = load_manifest()
    sources = stage_sources(manifest.source_text())
    for st in (*manifest.stages, manifest.ceiling, manifest.regression):
        assert st.id in sources, st.id
        assert st.kernel in sources[st.id]


def test_syncthreads_outside_bounds_checks():
    # A barrier inside `if (x < cols ...)` deadlocks or races on edge tiles.
    src = load_manifest().source_text()
    for m in re.finditer(r"__syncthreads\(\);", src):
        before = src[: m.start()]
        depth = before.count("{") - before.count("}")
        assert depth == 1, "a __syncthreads() sits inside a nested block"
