"""packaging: a plain (non-editable) install of the wheel reads and renders a capture.

The editable install the rest of the suite runs under finds kernels/ and templates/ at the top of
the checkout, so it never saw a wheel that could not find them (every capture command stopped with
``error: cannot find the kernels/ directory``). This test builds the wheel offline from a copy of
the source, installs it with ``--no-deps --no-index`` into a fresh virtual environment whose only
view of the dependencies is a ``.pth`` file listing this interpreter's import path (appended
directories: their own ``.pth`` files, the editable finder of this checkout among them, are not
processed), and runs the installed ``profiler-report`` from a folder outside the checkout.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import F32

from profiler_report.errors import InputError
from profiler_report.util import resources
from profiler_report.util.resources import resource_dir

REPO = Path(__file__).resolve().parent.parent
# Top-level entries of the checkout the build never reads (tests/data alone is 26 MB).
_NOT_COPIED = {".git", ".venv", ".ci", "build", "dist", "reports", "tests", ".pytest_cache", ".ruff_cache",
               ".hypothesis", ".whl"}
_TIMEOUT_S = 180


# --- resource_dir, both layouts (fast) --------------------------------------------------------------

def _layout(root: Path, *, packaged: bool, checkout: bool) -> Path:
    """A ``profiler_report`` package folder under ``root``: with the data inside it (a wheel), and/or
    beside it under a folder holding pyproject.toml (a source checkout). Returns the package folder."""
    pkg = root / "profiler_report"
    pkg.mkdir(parents=True)
    for base, wanted in ((pkg, packaged), (root, checkout)):
        if wanted:
            (base / "kernels" / "transpose").mkdir(parents=True)
            (base / "templates").mkdir()
    if checkout:
        (root / "pyproject.toml").write_text("[project]\nname = 'profiler-report'\n")
    return pkg


def test_resource_dir_wheel_layout(tmp_path):
    pkg = _layout(tmp_path / "site-packages", packaged=True, checkout=False)
    assert resource_dir("kernels", pkg) == pkg / "kernels"
    assert resource_dir("templates", pkg) == pkg / "templates"


def test_resource_dir_checkout_layout(tmp_path):
    pkg = _layout(tmp_path / "repo", packaged=False, checkout=True)
    assert resource_dir("kernels", pkg) == tmp_path / "repo" / "kernels"
    assert resource_dir("templates", pkg) == tmp_path / "repo" / "templates"


def test_resource_dir_prefers_the_package_folder(tmp_path):
    pkg = _layout(tmp_path / "repo", packaged=True, checkout=True)
    assert resource_dir("kernels", pkg) == pkg / "kernels"


def test_resource_dir_ignores_a_stray_folder_beside_an_installed_package(tmp_path):
    # site-packages/templates of some other distribution is not ours: no pyproject.toml beside it.
    pkg = _layout(tmp_path / "site-packages", packaged=False, checkout=False)
    (tmp_path / "site-packages" / "templates").mkdir()
    with pytest.raises(InputError, match="cannot find the templates/ directory"):
        resource_dir("templates", pkg)


def test_resource_dir_unknown_name():
    with pytest.raises(ValueError, match="unknown resource"):
        resource_dir("scripts")


def test_resource_dir_is_a_real_path_here():
    # The 3.11 bug: a MultiplexedPath whose str() is no path. Whatever imported profiler_report
    # (editable install, PYTHONPATH), str() of the folder must be a directory jinja2 can open.
    for name in resources.RESOURCES:
        found = resource_dir(name)
        assert isinstance(found, Path) and os.path.isdir(str(found)), found
    assert (resource_dir("kernels") / "transpose" / "stages.toml").is_file()
    assert (resource_dir("templates") / "report.html.j2").is_file()
    if resources.PACKAGE_DIR == REPO / "profiler_report":  # this checkout: the folders at its top
        assert resource_dir("kernels") == REPO / "kernels"


# --- the wheel, installed into a fresh virtual environment ------------------------------------------

def _why_no_wheel_build() -> str | None:
    if importlib.util.find_spec("venv") is None:
        return "the venv module is unavailable: install python3-venv"
    pip = importlib.metadata.version("pip")
    if tuple(int(p) for p in pip.split(".")[:2]) < (22, 3):
        return f"pip {pip} cannot install into another environment (--python needs pip>=22.3)"
    if importlib.util.find_spec("setuptools") is None:
        return "setuptools is not installed here (`make venv` installs it through the test extra)"
    import setuptools

    major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
    if (major, minor) < (70, 1) and importlib.util.find_spec("wheel") is None:
        return (f"setuptools {setuptools.__version__} cannot build a wheel without the `wheel` package "
                "(needs setuptools>=70.1, which `make venv` installs through the test extra)")
    return None


def _clean_env() -> dict[str, str]:
    """The environment for the installed tool: nothing that points back into this checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "VIRTUAL_ENV"}}
    env.update(PYTHONNOUSERSITE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def _run(args: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=_clean_env(), capture_output=True,
                          text=True, timeout=_TIMEOUT_S)
    assert proc.returncode == 0, (f"{' '.join(map(str, args))} exited {proc.returncode}\n"
                                  f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
    return proc


def _copy_source(dest: Path) -> Path:
    """The checkout minus tests, reports and build leftovers: the build writes build/ and *.egg-info
    beside the sources, which must land neither in the checkout nor (stale) in the wheel."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
        if Path(folder) == REPO:
            skip |= _NOT_COPIED & set(names)
        return skip

    shutil.copytree(REPO, dest, ignore=ignore)
    return dest


def _dependency_dirs(venv_path: list[str]) -> list[str]:
    """This interpreter's import path less the checkout and what the fresh environment already has
    (the standard library): where the dependencies are, so that nothing is downloaded. The whole
    path, not just site-packages, so that a test environment that itself reaches its packages
    through a .pth line or PYTHONPATH works too."""
    dirs = []
    prefix = Path(sys.prefix).resolve()  # a .venv inside the checkout (make test) holds the dependencies
    for entry in sys.path:
        path = Path(entry or os.curdir).resolve()
        in_source = path.is_relative_to(REPO) and not path.is_relative_to(prefix)
        if (in_source or not path.is_dir() or str(path) in venv_path
                or str(path) in dirs):
            continue
        dirs.append(str(path))
    return dirs


def _expected_in_wheel() -> set[str]:
    """Every module of the package and every file of kernels/ and templates/, as wheel paths."""
    names = {f"profiler_report/{p.relative_to(REPO / 'profiler_report').as_posix()}"
             for p in (REPO / "profiler_report").rglob("*.py") if "__pycache__" not in p.parts}
    for data in resources.RESOURCES:
        names |= {f"profiler_report/{data}/{p.relative_to(REPO / data).as_posix()}"
                  for p in (REPO / data).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    return names


def test_wheel_installs_and_reads_a_capture(tmp_path):
    why = _why_no_wheel_build()
    if why:
        pytest.skip(why)

    # Build the wheel offline with this environment's setuptools.
    src = _copy_source(tmp_path / "src")
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", wheels, src], cwd=tmp_path)
    (wheel,) = wheels.glob("profiler_report-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        listed = set(zf.namelist())
    for must in ("profiler_report/kernels/transpose/transpose.cu", "profiler_report/kernels/transpose/stages.toml",
                 "profiler_report/templates/report.html.j2", "profiler_report/capture/reader_child.py"):
        assert must in listed, must
    assert _expected_in_wheel() <= listed, sorted(_expected_in_wheel() - listed)
    assert not any(n.startswith(("kernels/", "templates/", "tests/")) for n in listed), sorted(listed)

    # A fresh virtual environment that sees the dependencies through one .pth file of plain paths.
    # Without pip of its own (ensurepip is most of a venv's cost): this pip installs into it (--python).
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    vpy = venv / "bin" / "python"
    probe = "import sys, sysconfig; print(sysconfig.get_paths()['purelib']); print(*sys.path[1:], sep='\\n')"
    site_dir, *venv_path = _run([vpy, "-c", probe], cwd=tmp_path).stdout.splitlines()
    venv_site = Path(site_dir)
    venv_path = [str(Path(p).resolve()) for p in venv_path]
    (venv_site / "zz_profiler_report_test_deps.pth").write_text("\n".join(_dependency_dirs(venv_path)) + "\n")
    _run([sys.executable, "-m", "pip", "--python", vpy, "install", "-q", "--no-deps", "--no-index", wheel],
         cwd=tmp_path)

    # Everything below runs from a folder outside the checkout.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([vpy, "-c", "import profiler_report; from profiler_report.util.resources import resource_dir; "
                  "print(profiler_report.__file__); print(resource_dir('kernels')); print(resource_dir('templates'))"],
                 cwd=elsewhere).stdout.split()
    installed = venv_site.resolve() / "profiler_report"
    for path in where:
        assert Path(path).resolve().is_relative_to(installed), (path, installed)
        assert not Path(path).resolve().is_relative_to(REPO), path

    tool = venv / "bin" / "profiler-report"
    summary = _run([tool, "summary", F32 / "profile.ncu-rep"], cwd=elsewhere).stdout
    assert summary.startswith("stage,"), summary[:500]
    assert "\nnaive,stage,transpose_naive," in summary, summary[:500]

    capture = shutil.copytree(F32, elsewhere / "capture")
    _run([tool, "render", "--from", capture / "profile.ncu-rep", "--out", "out"], cwd=elsewhere)
    out = elsewhere / "out"
    for name in ("index.html", "summary.csv", "summary.json"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert "transpose_naive" in (out / "index.html").read_text()

    # new-case writes its files from the installed package, and the folder loads as a case.
    _run([tool, "new-case", "mine"], cwd=elsewhere)
    code = "from profiler_report.model.registry import get_case; print(get_case('mine').manifest.stage_ids())"
    ids = _run([vpy, "-c", code], cwd=elsewhere).stdout
    assert "'strided', 'coalesced', 'vector'" in ids, ids
