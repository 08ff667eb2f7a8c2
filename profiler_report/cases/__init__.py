"""Case studies: one kernel ladder each, behind one seam (:class:`~.base.Case`).

A case is a name, its dimensions, its manifest (``kernels/<case>/stages.toml``: stages with
expected effects, the ceiling) and a Python side (buffers, reference, comparison, work model,
launch shapes, peers, notes, default thresholds). :data:`REGISTRY` maps names to the modules
that define them; each module exposes ``CASE``. Adding a case is a folder under ``kernels/``, a
module (or package) here, and one line in :data:`REGISTRY`.

This module imports nothing heavy: the registry is read by every command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from profiler_report.errors import InputError

if TYPE_CHECKING:
    from profiler_report.cases.base import Case

#: Case name -> module defining ``CASE``.
REGISTRY = {
    "transpose": "profiler_report.cases.transpose",
    "reduction": "profiler_report.cases.reduction",
}
DEFAULT_CASE = "transpose"


def get_case(name: str = DEFAULT_CASE) -> Case:
    """The registered case ``name``.

    Raises:
        InputError: no case has that name.
    """
    if name not in REGISTRY:
        raise InputError(f"unknown case {name!r}", f"use one of {', '.join(sorted(REGISTRY))}")
    return importlib.import_module(REGISTRY[name]).CASE
