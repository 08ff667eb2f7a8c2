"""Case studies: one kernel ladder each, behind one seam (:class:`~.base.Case`).

A case is a name, its dimensions, its manifest (``stages.toml``: stages with expected effects,
the ceiling) and a Python side (buffers, reference, comparison, work model, launch shapes, peers,
notes, default thresholds). Built-in cases: :data:`REGISTRY` maps names to the modules that
define them (their files under ``kernels/<case>/``). A user's case is a folder holding
``case.py`` (which ends with ``CASE = YourCase()``), ``stages.toml`` and the kernel source,
made by ``profiler-report new-case DIR`` and loaded by :func:`get_case` from its path
(:mod:`profiler_report.cases.folder`).

This module imports nothing heavy: the registry is read by every command.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from profiler_report.errors import InputError

if TYPE_CHECKING:
    from profiler_report.cases.base import Case

#: Case name -> module defining ``CASE``.
REGISTRY = {
    "transpose": "profiler_report.cases.transpose",
    "reduction": "profiler_report.cases.reduction",
    "gemm": "profiler_report.cases.gemm",
}
DEFAULT_CASE = "transpose"


def is_case_path(ref: str) -> bool:
    """Whether ``ref`` names a case folder rather than a built-in case: it has a path separator,
    starts with "." or "~", or is an existing folder."""
    return "/" in ref or "\\" in ref or ref.startswith((".", "~")) or (ref not in REGISTRY and Path(ref).is_dir())


def get_case(ref: str = DEFAULT_CASE) -> Case:
    """The case ``ref``: a built-in case's name, or the path of a user's case folder.

    Raises:
        InputError: no built-in case has that name and it is no folder.
        CaseError: the folder's case.py, stages.toml or kernel source is broken
            (see :func:`profiler_report.cases.folder.load_case_folder`).
    """
    if ref in REGISTRY:
        return importlib.import_module(REGISTRY[ref]).CASE
    if ref.strip() and is_case_path(ref):  # "" would be the current folder
        from profiler_report.cases.folder import load_case_folder

        return load_case_folder(Path(ref))
    raise InputError(f"unknown case {ref!r}",
                     f"use one of {', '.join(sorted(REGISTRY))}, or the path of a case folder "
                     "(`profiler-report new-case DIR` makes one)")
