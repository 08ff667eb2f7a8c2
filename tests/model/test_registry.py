"""model.registry (case folders) and model.scaffold: a user's case folder made by `new-case`, run through the live
side exactly as a built-in case, and every way a user's case can be broken.

The GPU is a CPU stand-in (tests/fakes.py: numpy arrays, Python "kernels", event times that are
test values); validation, buffers, the case's methods, the sidecar files and the report are the
tool's own code. The kernels themselves are compiled for sm_90 by nvcc (real compiler).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import CompileException, install_numpy_gpu

from profiler_report.errors import CaseError, InputError, KernelIncorrectError
from profiler_report.live.config import RunConfig
from profiler_report.live.session import live_run
from profiler_report.model.registry import compile_error, get_case, load_case_folder, stage_at_line
from profiler_report.model.scaffold import SCAFFOLD_FILES, new_case

ROOT = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc")


def _scale(grid, block, x, y, n):  # the scaffold's stages, in Python: y = 2 * x
    y[:] = x * 2


def _copy(grid, block, x, y, n):
    y[:] = x


SCAFFOLD_KERNELS = {"scale_strided": _scale, "scale_coalesced": _scale, "scale_vector": _scale, "copy_kernel": _copy}


@pytest.fixture
def folder(tmp_path) -> Path:
    dest = tmp_path / "my-ladder"
    new_case(dest)
    return dest


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "profiler_report", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


# --------------------------------------------------------------------------------------------
# new-case and loading


def test_new_case_writes_a_loadable_folder(folder):
    assert sorted(p.name for p in folder.iterdir()) == sorted(SCAFFOLD_FILES)
    case = get_case(str(folder))
    assert case.name == "my_ladder" and case.folder == folder.resolve() and case.ref == str(folder.resolve())
    assert case.manifest.stage_ids() == ["strided", "coalesced", "vector"] and case.manifest.ceiling.id == "copy"
    assert all(len(s.expect) == 1 for s in case.manifest.stages[1:])  # one expected effect per stage
    assert not case.has_peers and case.default_dtype == "float32"
    assert get_case(str(folder)) is case  # case.py is imported once


def test_new_case_never_overwrites(folder):
    with pytest.raises(InputError, match="not an empty folder"):
        new_case(folder)
    res = _cli("new-case", str(folder))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "never overwrites" in res.stderr


def test_new_case_cli_prints_the_next_step(tmp_path):
    res = _cli("new-case", str(tmp_path / "h"), "--name", "hist")
    assert res.returncode == 0, res.stderr
    assert "next: profiler-report run --case" in res.stdout
    assert 'name = "hist"' in (tmp_path / "h" / "case.py").read_text()


def test_unknown_case_name_says_a_folder_also_works():
    with pytest.raises(InputError) as exc:
        get_case("no_such_case")
    assert "path of a case folder" in exc.value.one_line()


@pytest.mark.skipif(NVCC is None and not os.environ.get("CI"), reason="nvcc not installed")
@pytest.mark.parametrize("ctype", ["float", "double"])
def test_scaffold_kernels_compile_for_sm90(folder, tmp_path, ctype):
    assert NVCC is not None, "nvcc is not on PATH on the CI machine"
    case = load_case_folder(folder)
    kernels = [s.kernel for s in (*case.manifest.stages, case.manifest.ceiling)]
    src = tmp_path / "inst.cu"
    src.write_text(f'#include "{case.manifest.source}"\n' + "".join(
        f"template __global__ void {k}<{ctype}>(const {ctype}*, {ctype}*, long long);\n" for k in kernels))
    res = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-lineinfo", "-Xptxas", "-v", "-o",
                          str(tmp_path / "inst.cubin"), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(re.findall(r"Compiling entry function", res.stderr)) == len(kernels)


# --------------------------------------------------------------------------------------------
# The live run, on the CPU stand-in


def _cfg(folder: Path, **kw) -> RunConfig:
    return RunConfig(case=str(folder), size={"n": 4099}, counters=False, sanitize=False, **kw)


def test_live_run_of_the_scaffold_validates_times_and_renders(folder, tmp_path, monkeypatch):
    from profiler_report.report.build import render_timings_only

    install_numpy_gpu(monkeypatch, SCAFFOLD_KERNELS)
    dest = tmp_path / "report"
    monkeypatch.chdir(tmp_path)
    live_run(_cfg(folder), dest, render=lambda out: render_timings_only(out, case=get_case(str(folder))))
    validation = json.loads((dest / "validation.json").read_text())
    assert [(v["stage"], v["correct"], v["n"]) for v in validation] == [
        ("strided", True, 4099), ("coalesced", True, 4099), ("vector", True, 4099), ("copy", True, 4099)]
    timed = json.loads((dest / "timings.json").read_text())["timings"]
    assert [t["name"] for t in timed] == ["memcpy", "strided", "coalesced", "vector", "copy"]
    assert timed[1]["gbps"] == pytest.approx(2 * 4099 * 4 / (timed[1]["median_us"] * 1e3))  # the case's work model
    prov = json.loads((dest / "provenance.json").read_text())
    assert prov["case"] == "my_ladder" and prov["case_dir"] == "my-ladder" and prov["n"] == 4099
    html = (dest / "index.html").read_text()
    assert "Each thread scales 16 consecutive elements" in html and "unavailable (--no-counters)" in html
    assert "bit-exact against 2 * x" in html


def test_the_folder_recorded_in_provenance_is_found_again(folder, tmp_path, monkeypatch):
    from profiler_report.report.build import counterless_inputs, render_timings_only

    install_numpy_gpu(monkeypatch, SCAFFOLD_KERNELS)
    monkeypatch.chdir(tmp_path)
    live_run(_cfg(folder), tmp_path / "r", render=None)
    from profiler_report.capture.sidecars import read_sidecars

    inp = counterless_inputs(tmp_path / "r", read_sidecars(tmp_path / "r"))
    assert inp.case is get_case(str(folder))
    render_timings_only(tmp_path / "r")
    assert "Each thread scales" in (tmp_path / "r" / "index.html").read_text()


def test_a_wrong_output_names_the_file_and_the_stage(folder, tmp_path, monkeypatch, earlier):
    def half_written(grid, block, x, y, n):
        y[: n // 2] = x[: n // 2] * 2  # the rest keeps its poison

    install_numpy_gpu(monkeypatch, {**SCAFFOLD_KERNELS, "scale_vector": half_written})
    with pytest.raises(KernelIncorrectError) as exc:
        live_run(_cfg(folder), earlier, render=None)
    assert exc.value.exit_code == 1
    assert re.search(r"stage vector \(.*kernels\.cu\) is wrong at n=4099 float32: 2050 of 4099", exc.value.message)
    assert not json.loads((earlier / "validation.json").read_text())[2]["correct"]


def test_a_reference_that_raises_is_one_line_naming_case_py_and_the_stage(folder, monkeypatch, earlier):
    _edit(folder / "case.py", "        return inputs if stage.op == \"copy\" else inputs * 2",
          "        raise ValueError(f'no reference for {stage.id}')")
    install_numpy_gpu(monkeypatch, SCAFFOLD_KERNELS)
    with pytest.raises(CaseError) as exc:
        live_run(_cfg(folder), earlier, render=None)
    line = exc.value.one_line()
    assert exc.value.exit_code == 10 and "\n" not in line
    assert re.search(r"case\.py:\d+: reference\(\) for stage strided raised ValueError: no reference for strided",
                     line)
    assert (earlier / "index.html").read_text() == "earlier report\n"  # nothing already written is lost


def test_a_kernel_that_does_not_compile_names_line_stage_and_nvrtc_error(folder, monkeypatch, earlier, tmp_path):
    _edit(folder / "kernels.cu", "        y[i] = x[i] * T(2);\n    }\n}\n// end stage\n\n// stage: vector",
          "        y[i] = x[i] * T(2) + oops;\n    }\n}\n// end stage\n\n// stage: vector")
    case = load_case_folder(folder)
    log = _compiler_log(case, tmp_path)
    install_numpy_gpu(monkeypatch, SCAFFOLD_KERNELS, compile_error=CompileException(log))
    with pytest.raises(CaseError) as exc:
        live_run(_cfg(folder), earlier, render=None)
    bad_line = next(i for i, t in enumerate(case.manifest.source_text().splitlines(), 1) if "oops" in t)
    assert f"kernels.cu:{bad_line} (stage coalesced): NVRTC: error: identifier \"oops\" is undefined" \
        in exc.value.message
    assert exc.value.exit_code == 10 and (earlier / "index.html").read_text() == "earlier report\n"


def _compiler_log(case, tmp_path: Path) -> str:
    """The real front-end log of the broken source: nvcc's (the same EDG front end as NVRTC,
    the same ``FILE(LINE): error: TEXT`` lines); without nvcc, the line as NVRTC writes it."""
    src = case.manifest.source
    if NVCC is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc is not on PATH on the CI machine")
        line = next(i for i, t in enumerate(src.read_text().splitlines(), 1) if "oops" in t)
        return f'{src.name}({line}): error: identifier "oops" is undefined\n\n1 error detected in the compilation.'
    inst = tmp_path / "inst.cu"
    inst.write_text(f'#include "{src}"\ntemplate __global__ void scale_coalesced<float>(const float*, float*, '
                    "long long);\n")
    res = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "x.cubin"), str(inst)],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "oops" in res.stderr
    return res.stderr


def test_compile_error_outside_every_block_and_without_a_line(folder):
    case = load_case_folder(folder)
    err = compile_error(case, 'kernels.cu(8): error: expected a ";"')
    assert "kernels.cu:8 (outside every stage block)" in err.message
    assert "NVRTC failed: nvrtc: something odd" in compile_error(case, "nvrtc: something odd\n").message
    text = case.manifest.source_text()
    first = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("// stage: strided"))
    assert stage_at_line(text, first + 2) == "strided" and stage_at_line(text, 1) is None


# --------------------------------------------------------------------------------------------
# A broken folder: one line naming the file (and stage), exit 10, through the CLI


@pytest.mark.parametrize("breakage, expected", [
    (("stages.toml", 'id = "vector"', 'id = "vector4"'),
     r"kernels\.cu: no `// stage: vector4` block for stage vector4 of .*stages\.toml"),
    (("stages.toml", 'kernel = "scale_vector"', 'kernel = "scale_vec"'),
     r"kernels\.cu: the block of stage vector does not define kernel scale_vec"),
    (("case.py", "from profiler_report.model.manifest import Stage", "from profiler_report.model.manifest import Stag"),
     r"case\.py:\d+: case\.py does not import: ImportError: cannot import name 'Stag'"),
    (("case.py", "CASE = ScaleCase()", "CASE = ScaleCase"),
     r"case\.py defines CASE is a type, not an instance"),
    (("stages.toml", "[ceiling]", "[ceiling"), r"bad stage manifest .*stages\.toml"),
    # A launch kind whose template the kernel static_asserts: the fix names this folder's file
    # and what a valid template is.
    (("stages.toml", 'launch = "vector"', 'launch = "vec_realigned"\ntemplate = [32, 16, 128]'),
     r"stage vector: tile shape 32x16 with 128 threads is not valid \(fix: set `template` in /\S+/stages\.toml to "
     r"\[rows, cols, threads\]"),
])
def test_a_broken_folder_is_one_line_with_exit_10(folder, breakage, expected):
    name, old, new = breakage
    _edit(folder / name, old, new)
    res = _cli("run", "--case", str(folder), "--no-counters", "--no-sanitize")
    assert res.returncode == 10, res.stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: ") and "Traceback" not in res.stderr
    assert re.search(expected, res.stderr), res.stderr


def test_a_case_named_like_a_built_in_one_is_refused(folder):
    _edit(folder / "case.py", 'name = "my_ladder"', 'name = "transpose"')
    with pytest.raises(CaseError, match="name of a built-in case"):
        load_case_folder(folder)


# --------------------------------------------------------------------------------------------
# make report CASE=...


def test_make_report_passes_the_case_and_says_when_nothing_is_recorded(folder):
    env = {k: v for k, v in os.environ.items() if k not in ("CASE", "OUT", "ARGS")}
    env.update(PYTHON=sys.executable, CASE=str(folder), PATH="/usr/bin:/bin")  # no nvidia-smi, no ncu
    res = subprocess.run(["bash", str(ROOT / "scripts" / "make_report.sh")], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=600)
    assert res.returncode == 8, res.stdout + res.stderr
    assert "No live run here" in res.stdout
    # The case's name (new-case made it my_ladder from the folder my-ladder), as a live run names its folder.
    assert f"no recorded capture of case {folder} in reports/h200-my_ladder/" in res.stderr
    makefile = (ROOT / "Makefile").read_text()
    assert 'CASE="$(CASE)"' in makefile
    script = (ROOT / "scripts" / "make_report.sh").read_text()
    assert 'case_args=(--case "$CASE")' in script and script.count('${case_args[@]+"${case_args[@]}"}') == 2


def test_make_report_with_an_unknown_case_says_so(tmp_path):
    # Not "no recorded capture ... run it on a GPU machine": no GPU would help.
    env = {k: v for k, v in os.environ.items() if k not in ("CASE", "OUT", "ARGS")}
    env.update(PYTHON=sys.executable, CASE="no_such_case", PATH="/usr/bin:/bin")
    res = subprocess.run(["bash", str(ROOT / "scripts" / "make_report.sh")], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=600)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("error: unknown case 'no_such_case' (fix: ")
    assert "no recorded capture" not in res.stderr


def test_a_capture_of_another_case_is_refused_with_case(monkeypatch, capsys):
    from conftest import F32
    from gate_support import cli

    code, out, err = cli(monkeypatch, capsys, "summary", F32 / "profile.ncu-rep", "--case",
                         ROOT / "examples" / "histogram")
    assert code == 2 and out == "" and "was made by case 'transpose', not 'histogram'" in err
