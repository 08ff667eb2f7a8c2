"""Where the packaged data lives: ``kernels/`` (one folder per case) and ``templates/``.

In a source checkout they sit at the top of the repository, beside ``profiler_report/``; a wheel
ships them inside the package as ``profiler_report/kernels`` and ``profiler_report/templates``
(see pyproject.toml). Neither folder is a Python package, so the lookup joins plain paths under
the folder of the ``profiler_report`` package itself (``importlib.resources.files()`` on a folder
without ``__init__.py`` gives a namespace ``MultiplexedPath`` on Python 3.11, whose ``str()`` is no
path: that broke every capture read after a plain ``pip install .``). tests/test_packaging.py
builds the wheel, installs it into a fresh virtual environment and reads a capture with it.
"""

from __future__ import annotations

from pathlib import Path

from profiler_report.errors import InputError

#: The data folders a lookup may name.
RESOURCES = ("kernels", "templates")

#: The folder of the ``profiler_report`` package (``.../site-packages/profiler_report`` once
#: installed, ``<checkout>/profiler_report`` in a source checkout or an editable install).
PACKAGE_DIR = Path(__file__).resolve().parent.parent


def resource_candidates(name: str, package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The places :func:`resource_dir` looks for ``name``, in order: inside the package (a
    wheel), then at the top of the source checkout the package sits in. The second is only a
    candidate when that top folder holds ``pyproject.toml``: an installed package's parent is
    ``site-packages``, whose stray ``templates/`` of some other distribution must never count."""
    if name not in RESOURCES:
        raise ValueError(f"unknown resource {name!r} (one of {', '.join(RESOURCES)})")
    candidates = [package_dir / name]
    root = package_dir.parent
    if (root / "pyproject.toml").is_file():
        candidates.append(root / name)
    return candidates


def resource_dir(name: str, package_dir: Path = PACKAGE_DIR) -> Path:
    """The folder ``name`` (one of :data:`RESOURCES`): inside the installed package, else at the
    top of the source checkout (see :func:`resource_candidates`).

    Raises:
        InputError: the folder exists in neither place (a broken install).
    """
    for path in resource_candidates(name, package_dir):
        if path.is_dir():
            return path
    raise InputError(f"cannot find the {name}/ directory of profiler-report (looked in {package_dir})",
                     "reinstall profiler-report (`pip install .` from its source folder)")
