"""Where the packaged data lives: ``kernels/`` (one folder per case) and ``templates/``.

In a source checkout they sit at the top of the repository, beside ``profiler_report/``; a wheel
ships them inside the package as ``profiler_report/kernels`` and ``profiler_report/templates``
(see pyproject.toml). Neither folder is a Python package, so the lookup joins paths under the
``profiler_report`` package itself: ``importlib.resources.files()`` on a folder without
``__init__.py`` gives a namespace ``MultiplexedPath`` on Python 3.11, whose ``str()`` is no path.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from profiler_report.errors import InputError

#: The data folders a lookup may name.
RESOURCES = ("kernels", "templates")


def resource_dir(name: str) -> Path:
    """The folder ``name`` (one of :data:`RESOURCES`): inside the installed package, else at the
    top of the source checkout.

    Raises:
        InputError: the folder exists in neither place (a broken install).
    """
    package = importlib.resources.files("profiler_report")
    candidates = [Path(str(package)) / name] if isinstance(package, Path) else []
    candidates.append(Path(__file__).resolve().parent.parent.parent / name)
    for path in candidates:
        if path.is_dir():
            return path
    raise InputError(f"cannot find the {name}/ directory of profiler-report",
                     "reinstall profiler-report (`pip install .` from its source folder)")
