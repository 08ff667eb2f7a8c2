"""The GEMM kernels compile with nvcc for sm_90 (every stage and every swept warptile shape)
without register spills, within 255 registers and the 48 KB of static shared memory a block may
declare (the kernels take no dynamic shared memory)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from test_kernels import _ptxas, _require_nvcc

from profiler_report.cases.gemm.bench import SHAPES
from profiler_report.model.registry import get_case

pytestmark = pytest.mark.slow  # g++/nvcc builds: seconds each
CASE = get_case("gemm")
_ALL = [*CASE.manifest.stages, *(replace(CASE.manifest.stages[-1], targs=tuple(map(str, s))) for s in SHAPES)]
#: One of each instantiation (the manifest's warptile shape is one of the swept ones).
STAGES = list({s.name_expression("float"): s for s in _ALL}.values())


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    nvcc = _require_nvcc()
    lines = [f'#include "{CASE.manifest.source}"']
    args = "(const float*, const float*, float*, int, int, int)"
    lines += [f"template __global__ void {s.name_expression('float')}{args};" for s in STAGES]
    log = _ptxas(nvcc, tmp_path_factory.mktemp("nvcc") / "gemm.cu", lines)
    out = []
    for block in log.split("Compiling entry function ")[1:]:
        name = block.split("'")[1]
        spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
        regs = re.search(r"Used (\d+) registers", block)
        smem = re.search(r"(\d+) bytes smem", block)  # absent for a kernel without shared memory
        assert spills and regs, block
        out.append((name, spills[1], spills[2], regs[1], smem[1] if smem else "0"))
    return out


def test_every_stage_and_shape_compiles(entries):
    assert len(entries) == len(STAGES)


def test_no_spills_within_the_register_and_shared_limits(entries):
    for name, stores, loads, regs, smem in entries:
        assert (stores, loads) == ("0", "0"), name
        assert int(regs) <= 255 and int(smem) <= 48 * 1024, (name, regs, smem)
