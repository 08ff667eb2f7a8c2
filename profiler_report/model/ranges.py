"""NVTX range names of the tool's own profiled launches: they carry the case and the stage.

A profiled launch sits in the push/pop range ``pr_<case>.<stage>``, the range that
``ncu --nvtx-include pr_<case>.<stage>/`` filters on. Captures recorded before cases existed use
``pr_<stage>``; those are transpose captures. Standard library only (the ncu target imports it).
"""

from __future__ import annotations

NVTX_PREFIX = "pr_"
#: The case of a range written before ranges named their case.
LEGACY_CASE = "transpose"


def nvtx_range_name(case: str, stage_id: str) -> str:
    """The range around ``stage_id``'s profiled launch, e.g. ``pr_transpose.naive``."""
    return f"{NVTX_PREFIX}{case}.{stage_id}"


def parse_range(part: str) -> tuple[str, str] | None:
    """(case, stage) of one range name written by :func:`nvtx_range_name` (or the legacy
    ``pr_<stage>``); None when it is not one of ours."""
    if not part.startswith(NVTX_PREFIX):
        return None
    case, dot, stage = part[len(NVTX_PREFIX):].partition(".")
    return (case, stage) if dot else (LEGACY_CASE, case)


def own_range(nvtx_range: str) -> tuple[str, str] | None:
    """(case, stage) of the innermost range of ours in a "/"-joined NVTX stack, else None."""
    for part in reversed((nvtx_range or "").split("/")):
        found = parse_range(part)
        if found is not None:
            return found
    return None
