"""``profiler-report new-case DIR``: a working case folder to edit into one's own ladder.

The files are ``templates/new_case/`` (case.py, kernels.cu, stages.toml, README.md): a
three-stage ladder (y = 2 * x, strided -> coalesced -> 16-byte vector) with a copy ceiling, one
expected effect per stage, that ``run --case DIR`` validates, times and profiles as it is.
``new-case --python DIR``: ``templates/new_python_case/`` (case.py, stages.py, stages.toml,
README.md), a Python ladder (y = 2 * relu(x): PyTorch eager -> one Triton kernel, torch.compile
as a peer) with a Triton copy ceiling.
"""

from __future__ import annotations

import re
from pathlib import Path

from profiler_report.errors import InputError
from profiler_report.util.fsio import atomic_write_many
from profiler_report.util.resources import resource_dir

#: The files of a new case folder, in ``templates/new_case/``.
SCAFFOLD_FILES = ("case.py", "kernels.cu", "stages.toml", "thresholds.toml", "README.md")
#: The files of a new Python ladder, in ``templates/new_python_case/``.
PYTHON_SCAFFOLD_FILES = ("case.py", "stages.py", "stages.toml", "thresholds.toml", "README.md")
#: Replaced by the case's name in every file.
PLACEHOLDER = "NEW_CASE_NAME"


def case_name_for(folder: Path) -> str:
    """An identifier from a folder name: 'my-ladder' -> 'my_ladder' (the NVTX range holds it)."""
    name = re.sub(r"\W+", "_", folder.resolve().name).strip("_") or "my_case"
    return name if not name[0].isdigit() else f"case_{name}"


def new_case(dest: Path, name: str | None = None, python: bool = False) -> list[Path]:
    """Write a working case folder at ``dest`` (created; it may exist only when empty); with
    ``python``, a Python ladder (stages as functions of stages.py).

    Returns:
        The files written, in :data:`SCAFFOLD_FILES` (:data:`PYTHON_SCAFFOLD_FILES`) order.

    Raises:
        InputError: ``dest`` is a file or a folder that is not empty; ``name`` is no identifier
            or a built-in case's name.
    """
    from profiler_report.model.registry import REGISTRY

    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest} already exists and is not an empty folder",
                         "pass a new folder: new-case never overwrites files")
    name = name or case_name_for(dest)
    if not re.match(r"^[A-Za-z_]\w*$", name) or name in REGISTRY:
        raise InputError(f"case name {name!r} is not usable (letters, digits, _; not a built-in case's name)",
                         "pass --name my_case")
    src = resource_dir("templates") / ("new_python_case" if python else "new_case")
    names = PYTHON_SCAFFOLD_FILES if python else SCAFFOLD_FILES
    files = {dest / f: (src / f).read_text().replace(PLACEHOLDER, name) for f in names}
    atomic_write_many(files)  # every file to a temporary name first, then the renames
    return list(files)
