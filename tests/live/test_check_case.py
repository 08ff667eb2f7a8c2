"""check-case: a user's case folder checked offline, without a GPU (NVRTC from the wheel the
spill check uses: the registers, spills and shared memory are ptxas's), and the source a user's
kernels compile as: under ``#line 1 "<real path>"``, so that ncu finds and embeds kernels.cu."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_report.model.registry import get_case
from profiler_report.model.scaffold import new_case

ROOT = Path(__file__).resolve().parents[2]
HISTOGRAM = ROOT / "examples" / "histogram"
HIST_CAPTURE = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"


# --------------------------------------------------------------------------------------------
# check-case: offline, GPU-free (NVRTC from the wheel the spill check uses)

def _nvrtc_or_skip():
    from profiler_report.errors import NvrtcNotFoundError
    from profiler_report.util.nvrtc import nvrtc_library

    try:
        nvrtc_library()
    except NvrtcNotFoundError:
        if os.environ.get("CI"):
            pytest.fail("the nvidia-cuda-nvrtc wheel (pyproject.toml's test extra) is not installed on CI")
        pytest.skip("nvidia-cuda-nvrtc not installed (pip install -e '.[test]')")


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "profiler_report", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_new_case_then_check_case_passes_with_a_table(tmp_path):
    _nvrtc_or_skip()
    dest = tmp_path / "lad"
    assert _run_cli("new-case", str(dest)).returncode == 0
    res = _run_cli("check-case", str(dest))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:5] == ["stage", "role", "dtype", "kernel", "registers"]
    rows = [ln.split() for ln in lines[2:-1]]
    assert [(r[0], r[2]) for r in rows] == [(s, d) for d in ("float32", "float64")
                                            for s in ("strided", "coalesced", "vector", "copy")]
    assert all(int(r[4]) > 0 and r[5] == "0/0" for r in rows)  # registers from ptxas, no spills
    assert lines[-1].startswith("check-case: 8 kernels (float32, float64) compiled with NVRTC for sm_90")


def test_check_case_reads_registers_from_ptxas():
    _nvrtc_or_skip()
    from profiler_report.live.check_case import check_case
    from profiler_report.model.registry import load_case_folder

    res = check_case(load_case_folder(HISTOGRAM))
    assert res.problems == []
    by_stage = {s.stage.id: s.entry for s in res.stages}
    # The kernel's own static shared memory, as ptxas counts it: one and eight 256-bin histograms.
    assert by_stage["shared_atomics"].shared_bytes == 1024 and by_stage["warp_private"].shared_bytes == 8192


BROKEN = [
    pytest.param(("stages.toml", "[ceiling]", "[ceiling"), r"bad stage manifest .*stages\.toml", id="stages.toml"),
    pytest.param(("case.py", "CASE = ScaleCase()", "raise RuntimeError('not yet')\nCASE = ScaleCase()"),
                 r"case\.py:\d+: case\.py does not import: RuntimeError: not yet", id="case.py raises"),
    pytest.param(("kernels.cu", "a.v[k] *= T(2);", "a.v[k] *= T(2;"),
                 r"kernels\.cu:\d+ \(stage vector\): NVRTC: error: expected a \"\)\" \[sm_90\] \(float32, float64\)",
                 id="kernel does not compile"),
    pytest.param(("case.py", "return Launch((-(-threads // BLOCK),), (BLOCK,))",
                  "return Launch((-(-threads // BLOCK),), (8 * BLOCK,))"),
                 r"case\.py: launch\(\) for stage strided: block \(2048,\) has 2048 threads, above 1024 per block; "
                 r"block dimension x = 2048 is above 1024 \(float32, float64\)", id="launch shape"),
]


@pytest.mark.parametrize("breakage, expected", BROKEN)
def test_a_broken_folder_is_exit_10_and_one_line(tmp_path, breakage, expected):
    _nvrtc_or_skip()
    dest = tmp_path / "lad"
    new_case(dest)
    _edit(dest / breakage[0], breakage[1], breakage[2])
    res = _run_cli("check-case", str(dest))
    assert res.returncode == 10, res.stdout + res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert all(ln.startswith("error: ") for ln in lines) and "Traceback" not in res.stderr
    assert re.search(expected, lines[0]), lines[0]
    if "Launch" in breakage[1]:  # one line per stage whose block is too large, every dtype in it
        assert len(lines) == 4 and all("2048 threads" in ln for ln in lines), lines
    else:
        assert len(lines) == 1, lines


def test_run_checks_the_folder_before_asking_for_a_gpu(tmp_path):
    # No GPU here: without the check first, this would be exit 8 (no GPU), not the kernel's line.
    _nvrtc_or_skip()
    dest = tmp_path / "lad"
    new_case(dest)
    _edit(dest / "kernels.cu", "a.v[k] *= T(2);", "a.v[k] *= T(2;")
    res = _run_cli("run", "--case", str(dest), "--no-counters", "--no-sanitize", "--out", str(tmp_path / "r"))
    assert res.returncode == 10, res.stderr
    assert res.stderr.count("\n") == 1 and "(stage vector): NVRTC: error" in res.stderr
    assert "check-case" in res.stderr  # the fix says how to see every problem offline


# --------------------------------------------------------------------------------------------
# Source lines of a user's kernels: the line information names the real file


def test_a_user_case_compiles_under_its_real_file_name(tmp_path):
    _nvrtc_or_skip()
    from profiler_report.live.kernels import module_source
    from profiler_report.util.nvrtc import compile_source

    dest = tmp_path / "lad"
    new_case(dest)
    case = get_case(str(dest))
    real = str(case.manifest.source.resolve())
    text = module_source(case)
    assert text.startswith(f'#line 1 "{real}"\n') and text.endswith(case.manifest.source_text())
    # Compiled under CuPy's kind of temporary name, the line table still names the real file,
    # which ncu --import-source reads and embeds.
    res = compile_source(text, "/tmp/tmpabc/0123456789abcdef0123456789abcdef.cubin.cu", ["scale_vector<float>"],
                         options=("-std=c++17", "-lineinfo"))
    assert res.ok, res.log
    files = re.findall(r'^\s*\.file\s+\d+\s+"([^"]+)"', res.ptx, re.M)
    assert real in files and not any(f.endswith(".cubin.cu") for f in files)
    # An error's line is the file's own line.
    broken = text.replace("a.v[k] *= T(2);", "a.v[k] *= T(2;")
    res = compile_source(broken, "/tmp/x.cubin.cu", ["scale_vector<float>"])
    line = case.manifest.source_text().splitlines().index("            a.v[k] *= T(2);") + 1
    assert f"{real}({line}): error" in res.log


def test_a_built_in_case_compiles_as_it_is():
    from profiler_report.live.kernels import module_source

    case = get_case("transpose")
    assert module_source(case) == case.manifest.source_text()


# --------------------------------------------------------------------------------------------
# The scaffold's ceiling moves as many bytes per access as its best stage


def _widest_access(ptx: str, mangled: str) -> int:
    """Bytes of the widest global load or store in one kernel's PTX (``ld.global.nc.v4.f32``: 16)."""
    start = ptx.index(f".entry {mangled}")
    end = ptx.find(".entry ", start + 1)
    body = ptx[start:end if end > 0 else None]
    widths = [int(v or 1) * int(bits) // 8
              for v, bits in re.findall(r"(?:ld|st)\.global(?:\.nc)?(?:\.v(\d))?\.[fbsu](\d+)", body)]
    return max(widths)


@pytest.mark.parametrize("ctype", ["float", "double"])
def test_the_scaffold_ceiling_moves_as_many_bytes_per_access_as_its_best_stage(tmp_path, ctype):
    _nvrtc_or_skip()
    from profiler_report.util.nvrtc import compile_source

    dest = tmp_path / "lad"
    new_case(dest)
    m = get_case(str(dest)).manifest
    names = {s.id: s.name_expression(ctype) for s in (*m.stages, m.ceiling)}
    res = compile_source(m.source_text(), str(m.source), list(names.values()))
    assert res.ok, res.log
    width = {sid: _widest_access(res.ptx, res.lowered[n]) for sid, n in names.items()}
    assert width["strided"] == width["coalesced"] == (4 if ctype == "float" else 8)
    assert width[m.ceiling.id] == max(width[s.id] for s in m.stages) == 16


def test_check_case_takes_a_built_in_case_by_name():
    res = _run_cli("check-case", "reduction", "--no-compile")
    assert res.returncode == 0, res.stderr
    assert "check-case: 22 kernels (float32, int32) not compiled (--no-compile)" in res.stdout


# --------------------------------------------------------------------------------------------
# Python ladders: nothing to compile; every dtype of the case (bfloat16 has no C++ type) is listed

@pytest.mark.parametrize("folder", ["softmax", "scaffold"])
def test_check_case_python_ladder_lists_every_dtype(tmp_path, folder):
    from profiler_report.live.check_case import check_case, preflight

    path = ROOT / "examples" / "softmax" if folder == "softmax" else tmp_path / "py"
    if folder == "scaffold":
        new_case(path, "py", python=True)
    case = get_case(str(path))
    res = check_case(case)
    assert res.problems == [] and not res.compiled
    assert {s.dtype for s in res.stages} == set(case.dtypes) and "bfloat16" in case.dtypes
    assert len(res.stages) == len(case.dtypes) * (len(case.manifest.stages) + 1)
    assert preflight(case).problems == []
    out = _run_cli("check-case", str(path))
    assert out.returncode == 0, out.stderr
    assert "Python stages" in out.stdout and "bfloat16" in out.stdout
