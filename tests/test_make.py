"""``make report`` and ``make check`` as a user without a GPU meets them: ``make report`` installs
only what rendering needs (the package, no test extras) and says so; ``make check`` gates
``CAPTURE=`` or, by default, the committed report of ``CASE`` (not the newest file).

``make`` itself is replaced by a recorder on PATH (no install runs here); the venv's python is
this environment's, so the rest of each script runs for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _venv_python(venv: Path) -> None:
    """``venv/bin/python``: this environment's interpreter (a wrapper: a symlink would lose its venv)."""
    py = venv / "bin" / "python"
    if not py.exists():
        py.parent.mkdir(parents=True, exist_ok=True)
        py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        py.chmod(0o755)


def _fake_make(tmp_path: Path) -> tuple[Path, Path]:
    """A PATH with a `make` that records its arguments and links the venv's python, no nvidia-smi."""
    bin_dir, log = tmp_path / "bin", tmp_path / "make.log"
    bin_dir.mkdir()
    _venv_python(tmp_path / "venv")
    (bin_dir / "make").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bin_dir / "make").chmod(0o755)
    return bin_dir, log


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_make_report_without_a_gpu_installs_only_the_package(tmp_path):
    bin_dir, log = _fake_make(tmp_path)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "CASE": "examples/histogram",
           "OUT": str(tmp_path / "out"), "PYTHON": "/nonexistent/python", "VENV": str(tmp_path / "venv")}
    res = subprocess.run(["bash", "scripts/make_report.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "installing only what rendering needs" in res.stdout and "without the test extras" in res.stdout
    assert log.read_text().split()[:2] == ["-s", "venv-render"]
    assert (tmp_path / "out" / "index.html").is_file() and "RECORDED" in res.stdout
    makefile = (ROOT / "Makefile").read_text()
    render = makefile[makefile.index("$(VENV)/.installed-render:"):].split("\n\n")[0]
    assert 'pip install -q -e .\n' in render + "\n" and "[test]" not in render


def _check(tmp_path: Path, **make_vars: str) -> subprocess.CompletedProcess:
    venv = tmp_path / "venv"
    _venv_python(venv)
    (venv / ".installed").touch()
    args = ["make", "-s", "check", f"VENV={venv}", *(f"{k}={v}" for k, v in make_vars.items())]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_check_defaults_to_the_case_s_committed_report(tmp_path):
    res = _check(tmp_path, CASE="examples/histogram")
    assert res.returncode == 0, res.stdout + res.stderr
    first = res.stdout.splitlines()[0]
    assert first == "profiler-report check reports/h200-histogram/profile.ncu-rep --case examples/histogram"
    res = _check(tmp_path, CAPTURE="tests/data/h200_histogram/profile.ncu-rep", CASE="examples/histogram")
    assert res.returncode == 0 and "check tests/data/h200_histogram/profile.ncu-rep" in res.stdout
    res = _check(tmp_path, CAPTURE=str(tmp_path / "none.ncu-rep"))
    assert res.returncode == 2 and "no capture" in res.stderr and "CAPTURE=" in res.stderr
