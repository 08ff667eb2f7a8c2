"""The bf16 GEMM kernels compile for sm_90a with nvcc and through the live runs' NVRTC path
(the case's ``nvrtc_options``) without register spills, within 255 registers and the 227 KB of
shared memory a block may use (static plus the launch's dynamic bytes); the wgmma stages are
refused by plain sm_90 (they need the architecture-specific target)."""

from __future__ import annotations

import re

import pytest
from test_kernels import _require_nvcc

from profiler_report.cases.hgemm import launch as geo
from profiler_report.live.cache import compile_options
from profiler_report.model.registry import get_case
from profiler_report.util.dtypes import ALL_CXX_TYPES

pytestmark = pytest.mark.slow  # nvcc and NVRTC builds: seconds each
CASE = get_case("hgemm")
CTYPE = ALL_CXX_TYPES["bfloat16"]
STAGES = CASE.manifest.stages
SIZE = CASE.size({})


def _nvcc(tmp_path, arch: str):
    import subprocess

    nvcc = _require_nvcc()
    pointers = f"(const {CTYPE}*, const {CTYPE}*, {CTYPE}*, int, int, int, int)"
    maps = f"(const __grid_constant__ TmaMap, const __grid_constant__ TmaMap, {CTYPE}*, int, int, int, int)"
    lines = [f'#include "{CASE.manifest.source}"',
             *dict.fromkeys(f"template __global__ void {s.name_expression(CTYPE)}"
                            f"{maps if s.launch in geo.TMA_KINDS else pointers};" for s in STAGES)]
    src = tmp_path / "hgemm_inst.cu"
    src.write_text("\n".join(lines) + "\n")
    return subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-lineinfo", "-Xptxas", "-v", "-o",
                           str(src.with_suffix(".cubin")), str(src)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    res = _nvcc(tmp_path_factory.mktemp("nvcc"), "sm_90a")
    assert res.returncode == 0, res.stderr[-2000:]
    out = {}
    for block in res.stderr.split("Compiling entry function ")[1:]:
        name = block.split("'")[1]
        spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
        regs = re.search(r"Used (\d+) registers", block)
        smem = re.search(r"(\d+) bytes smem", block)
        assert spills and regs, block
        out[name] = (spills[1], spills[2], int(regs[1]), int(smem[1]) if smem else 0)
    return out


def _shared_limit_ok(st, static: int) -> bool:
    return static + CASE.launch(st, SIZE, "bfloat16").shared_bytes <= geo.MAX_SHARED


def _mangled_targs(st) -> str:
    """How the Itanium ABI spells the template values after the element type (unsigned short, "t"):
    Li4E, Li16E; the whole argument list is then It...E."""
    return "".join(f"Li{v}E" for v in st.targs)


def test_every_stage_compiles_with_nvcc_without_spills(entries):
    kernels = {(s.kernel, s.targs) for s in STAGES}  # two stages may share a kernel (other template values)
    assert len(entries) == len(kernels)
    for st in STAGES:
        (name,) = [n for n in entries if st.kernel in n and f"It{_mangled_targs(st)}E" in n]
        stores, loads, regs, smem = entries[name]
        assert (stores, loads) == ("0", "0"), name
        assert regs <= 255 and _shared_limit_ok(st, smem), (name, regs, smem)
        assert smem <= 48 * 1024  # static shared memory: the wgmma stages take theirs dynamically


def test_wgmma_needs_the_architecture_specific_target(tmp_path):
    res = _nvcc(tmp_path, "sm_90")
    assert res.returncode != 0 and "wgmma" in res.stderr


def test_every_stage_compiles_through_nvrtc_with_the_case_options():
    from profiler_report.errors import NvrtcNotFoundError
    from profiler_report.util.nvrtc import compile_source

    names = [s.name_expression(CTYPE) for s in STAGES]
    try:  # arch sm_90 as CuPy passes it for an H200; the case's -arch=sm_90a takes over
        res = compile_source(CASE.manifest.source_text(), str(CASE.manifest.source), names, "sm_90",
                             compile_options(CASE))
    except NvrtcNotFoundError:
        pytest.skip("NVRTC not installed (pip install nvidia-cuda-nvrtc)")
    assert res.ok, res.log[-2000:]
    assert "for 'sm_90a'" in res.log
    reports = res.entries()
    for st, n in zip(STAGES, names, strict=True):
        rep = reports[res.lowered[n]]
        assert (rep.spill_stores, rep.spill_loads, rep.stack_bytes) == (0, 0, 0), (n, rep)
        assert rep.registers <= 255 and _shared_limit_ok(st, rep.shared_bytes), (n, rep)
    assert reports[res.lowered[names[2]]].registers > reports[res.lowered[names[1]]].registers  # 128 accumulators
