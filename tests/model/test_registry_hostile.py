"""Hostile case folders (model/registry.py, model/manifest.py): whatever case.py raises or exits
with while the case loads is exit 10 naming the file (Ctrl-C aside); stages.toml mistakes say
what is wrong in the file, not a Python error; a duplicate stage id, an expect factor of 0 or
below and a `source` outside the folder are refused; TOML nested thousands deep is one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_report.errors import CaseError, InputError
from profiler_report.gate.grammar import load_thresholds
from profiler_report.model.manifest import load_expectations
from profiler_report.model.registry import load_case_folder
from profiler_report.model.scaffold import new_case

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "tests" / "data" / "h200_f32_4096" / "raw.csv"
#: Nested arrays and inline tables past Python's recursion limit (tomllib recurses per level).
DEEP = ["x = " + "[" * 5000 + "]" * 5000 + "\n", "x = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dest = tmp_path / "my-ladder"
    new_case(dest)
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "profiler_report", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


@pytest.mark.parametrize(("tail", "words"), [
    ("import sys\nsys.exit(0)\n", r"exits \(SystemExit\(0\)\)"),
    ("raise SystemExit(3)\n", r"exits \(SystemExit\(3\)\)"),
    ("raise BaseException('x')\n", "raises BaseException: x"),
    ("raise GeneratorExit\n", "raises GeneratorExit"),
])
def test_an_exit_or_base_exception_in_case_py_is_a_case_error(folder: Path, tail: str, words: str) -> None:
    with (folder / "case.py").open("a") as fh:
        fh.write("\n" + tail)
    with pytest.raises(CaseError, match=rf"case\.py:\d+: case\.py {words} while the case is loaded"):
        load_case_folder(folder)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["check", "run"])
def test_sys_exit_0_in_case_py_is_exit_10_not_a_passing_gate(folder: Path, command: str) -> None:
    with (folder / "case.py").open("a") as fh:
        fh.write("\nimport sys\nsys.exit(0)\n")
    args = ("check", str(CAPTURE)) if command == "check" else ("run", "--no-counters", "--no-sanitize")
    res = _cli(*args, "--case", str(folder))
    assert res.returncode == 10, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "case.py" in res.stderr and "Traceback" not in res.stderr


def test_ctrl_c_in_case_py_is_still_an_interrupt(folder: Path) -> None:
    with (folder / "case.py").open("a") as fh:
        fh.write("\nraise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        load_case_folder(folder)


@pytest.mark.parametrize(("old", "new", "words"), [
    ('id = "vector"\n', "", r"a \[\[stage\]\] entry needs `id` as a non-empty string, got none"),
    ('kernel = "scale_vector"\n', "", r"entry of stage 'vector' needs `kernel`"),
    ('source = "kernels.cu"', "source = 5", r"`source` must name the kernel file as a string, got 5"),
    ("expect = []", 'expect = "abc"', r"stage strided: `expect` must be a list of tables, got 'abc'"),
    ('[ceiling]\nid = "copy"\nkernel = "copy_kernel"\nop = "copy"\n', 'ceiling = "x"\n[other]\n',
     r"a \[ceiling\] entry must be a table"),
    ('source = "kernels.cu"', 'source = "kernels.cu"\ntile = "big"', r"`tile` must be a positive integer, got 'big'"),
    ('source = "kernels.cu"', 'source = "kernels.cu"\nblock = 5', r"`block` must be \[x, y\] threads, got 5"),
    ('id = "vector"', "id = 7", r"needs `id` as a non-empty string, got 7"),
    ('id = "vector"', 'id = "vec tor"', r"stage id 'vec tor' is not a word"),
    ('id = "vector"', 'id = "coalesced"', r"stage id 'coalesced' is given twice"),
    ("factor = 4", "factor = 0", r"stage vector: expect factor must be above 0 .*got 0"),
    ("factor = 4", "factor = -2", r"expect factor must be above 0 .*got -2"),
    ('source = "kernels.cu"', 'source = "/etc/passwd"', r"`source` '/etc/passwd' is outside the folder"),
    ('source = "kernels.cu"', 'source = "../../../etc/hostname"', r"`source` '\.\./\.\./\.\./etc/hostname' is outside"),
])
def test_a_broken_stages_toml_says_what_is_wrong_in_the_file(folder: Path, old: str, new: str, words: str) -> None:
    _edit(folder / "stages.toml", old, new)
    with pytest.raises(CaseError) as exc:
        load_case_folder(folder)
    line = exc.value.one_line()
    assert "stages.toml" in line and exc.value.exit_code == 10, line
    assert re.search(words, line), line
    for internal in ("string indices", "PosixPath", "object has no attribute", "KeyError", "not iterable"):
        assert internal not in line


@pytest.mark.slow
@pytest.mark.parametrize("deep", DEEP, ids=["arrays", "inline-tables"])
def test_toml_nested_thousands_deep_is_one_line_everywhere(folder: Path, tmp_path: Path, deep: str) -> None:
    (folder / "stages.toml").write_text(deep)
    with pytest.raises(CaseError, match="nest too deeply"):
        load_case_folder(folder)
    other = tmp_path / "other.toml"
    other.write_text(deep)
    with pytest.raises(InputError, match="nest too deeply"):
        load_thresholds(other)
    with pytest.raises(InputError, match="nest too deeply"):
        load_expectations(other)
    res = _cli("check", str(CAPTURE), "--thresholds", str(other))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "nest too deeply" in res.stderr, res.stderr
