"""Which launch is which stage."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from profiler_report.capture.model import Capture
from profiler_report.cases.manifest import Manifest
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
            raise InputError(f"--stage {label}={pattern}: bad regular expression ({exc})") from exc
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
    from profiler_report.live.target import NVTX_PREFIX

    for part in reversed((row.nvtx_range or "").split("/")):
        if part.startswith(NVTX_PREFIX):
            return part[len(NVTX_PREFIX):]
    return row.kernel
