"""Which launch is which stage, and which case made a capture."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from profiler_report.capture.model import Capture
from profiler_report.cases import get_case
from profiler_report.cases.base import Case
from profiler_report.cases.manifest import Manifest
from profiler_report.cases.ranges import own_range
from profiler_report.errors import InputError


def assign_stages(capture: Capture, labels: list[tuple[str, str]] | None = None,
                  manifest: Manifest | None = None) -> pd.DataFrame:
    """One row per launch with its ``stage`` label and ``role`` ("stage" or "ceiling"), launch order.

    Labels, first match wins: ``labels`` (LABEL, REGEX) pairs searched in the kernel name and the
    NVTX range; our own NVTX ranges ``pr_<stage>``; else the kernel name (``#2``... when repeated).
    Launches that match no ``labels`` entry are dropped when ``labels`` is given.

    Raises:
        InputError: a REGEX is invalid, or ``labels`` matched no launch at all.
    """
    launches = capture.launches()
    compiled = []
    for label, pattern in labels or []:
        try:
            compiled.append((label, re.compile(pattern)))
        except re.error as exc:
            raise InputError(f"--stage {label}={pattern}: bad regular expression ({exc})",
                             "escape regex characters, e.g. --stage naive='^transpose_naive$'") from exc
    out, seen = [], {}
    for row in launches.itertuples():
        stage = _label(row, compiled)
        if stage is None:
            continue
        seen[stage] = seen.get(stage, 0) + 1
        if seen[stage] > 1:
            stage = f"{stage}#{seen[stage]}"
        ceiling = manifest is not None and stage == manifest.ceiling.id
        out.append({**row._asdict(), "stage": stage, "role": "ceiling" if ceiling else "stage"})
    frame = pd.DataFrame(out)
    if compiled and frame.empty:
        raise InputError("no launch matched any --stage pattern",
                         "kernels in the capture: " + ", ".join(sorted(set(launches["kernel"]))))
    return frame.drop(columns=["Index"], errors="ignore")


def _label(row: Any, compiled: list[tuple[str, re.Pattern[str]]]) -> str | None:
    if compiled:
        for label, rx in compiled:
            if rx.search(row.kernel) or rx.search(row.nvtx_range or ""):
                return label
        return None
    own = own_range(row.nvtx_range or "")
    return own[1] if own else row.kernel


def own_case(capture: Capture) -> Case | None:
    """The case that made ``capture``: every launch sits in a ``pr_<case>.<stage>`` range (or a
    legacy ``pr_<stage>`` one, a transpose) of one registered case; else None (a foreign capture).

    Raises:
        InputError: the ranges name a case this installation does not have.
    """
    found = {own_range(str(r or "")) for r in capture.launches()["nvtx_range"]}
    cases = {f[0] for f in found if f is not None}
    if None in found or len(cases) != 1:
        return None
    return get_case(cases.pop())
