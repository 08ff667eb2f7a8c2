"""The GEMM kernels' index arithmetic, edge handling and barriers, checked on the CPU: each stage
of kernels/gemm/stages.toml and each swept warptile shape, compiled for the host by g++ with every
CUDA thread of a block as a std::thread (tests/gemm_host/emulate.cpp), at the grid and block
the case launches, against a float64 reference within the case's gamma_K bound, its output
poisoned. This is no GPU validation (the GPU tests are test_gemm_gpu.py): it catches a wrong
index or a missed edge without a GPU, and a missing barrier only when the threads' interleaving
happens to expose it."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from profiler_report.cases.gemm.bench import SHAPES
from profiler_report.model.registry import get_case

pytestmark = pytest.mark.slow  # g++/nvcc builds: seconds each
HERE = Path(__file__).parent / "gemm_host"
CASE = get_case("gemm")
STAGES = list(CASE.manifest.stages)
SHAPED = [replace(STAGES[-1], id=f"shape_{'_'.join(map(str, s))}", targs=tuple(map(str, s))) for s in SHAPES]
#: Odd (scalar paths), multiples of 4 but of no tile (the float4 paths and their edges), a tile
#: multiple, one element.
SIZES = [(67, 133, 67), (130, 260, 36), (256, 256, 64), (1, 1, 1)]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not installed")
    out = tmp_path_factory.mktemp("emulate")
    lines = [f'else if (stage == "{s.id}") run({s.name_expression("float")});' for s in (*STAGES, *SHAPED)]
    (out / "stages.inc").write_text("\n".join(lines) + "\n")
    exe = out / "emulate"
    res = subprocess.run([gxx, "-std=c++20", "-O1", "-pthread", "-w", f"-I{out}", str(HERE / "emulate.cpp"), "-o",
                          str(exe)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    return exe


def _run(exe: Path, stage, m: int, n: int, k: int) -> tuple[float, int]:
    shape = CASE.launch(stage, {"m": m, "n": n, "k": k}, "float32")
    block = (*shape.block, 1)[:2]
    res = subprocess.run([str(exe), stage.id, str(m), str(n), str(k), *map(str, shape.grid), *map(str, block)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1), res.stderr
    worst, bad = res.stdout.split()
    return float(worst), int(bad)


@pytest.mark.parametrize("mnk", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", [*STAGES, *SHAPED], ids=lambda s: s.id)
def test_stage_is_right_on_the_host(emulator, stage, mnk):
    worst, bad = _run(emulator, stage, *mnk)
    assert bad == 0, f"{stage.id} at {mnk}: {bad} elements outside the bound (worst {worst:.3g} x the bound)"


def test_an_unwritten_output_fails_everywhere(emulator):
    nothing = replace(STAGES[0], id="none")
    assert _run(emulator, nothing, 5, 7, 3)[1] == 5 * 7
