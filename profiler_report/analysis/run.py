"""A run loaded for judging: a capture, its sidecar files and its analysis.

The input side of ``check`` and ``diff`` (and of ``render --baseline``'s comparison):
:func:`load_run` reads a capture (:mod:`profiler_report.capture`), the ``timings.json`` /
``provenance.json`` beside it, labels and analyzes it (:func:`profiler_report.analysis.analyze`)
and returns a :class:`Run` for :mod:`profiler_report.gate` and :mod:`.compare`. Nothing here
imports the HTML layer or the GPU side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis, analyze
from profiler_report.capture.load import read_capture
from profiler_report.capture.model import Capture
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.cases.manifest import Manifest, load_manifest
from profiler_report.errors import InputError

#: The prefix of the NVTX range the project's own stage launcher puts around each stage
#: (``pr_<stage id>``); the same value as ``profiler_report.live.target.NVTX_PREFIX``, which
#: this module may not import (``check`` and ``diff`` load nothing of the GPU side).
OWN_NVTX_PREFIX = "pr_"


@dataclass
class Run:
    """One capture ready to check: the analysis, its sidecars and what makes it comparable."""

    path: Path
    capture: Capture
    analysis: Analysis
    sidecars: Sidecars  # timings.json, provenance.json, validation.json, ... beside the capture
    manifest: Manifest | None = None  # kernels/stages.toml for the project's own captures, else None

    @property
    def timings(self) -> list[dict[str, Any]] | None:
        """timings.json entries (name, median_us, p10_us, p90_us, gbps, ...); None when absent."""
        return self.sidecars.timings or None

    @property
    def provenance(self) -> dict[str, Any]:
        """provenance.json, {} when absent."""
        prov = self.sidecars.provenance
        return prov if isinstance(prov, dict) else {}

    @property
    def summary(self) -> pd.DataFrame:
        """The per-stage headline table (one row per stage, ceiling rows included)."""
        return self.analysis.summary

    def stages(self) -> list[str]:
        """Every stage label (ceiling rows included), in launch order."""
        return [str(s) for s in self.summary["stage"]]


def own_manifest_for(capture: Capture, manifest: Manifest) -> Manifest | None:
    """``manifest`` when every launch of ``capture`` ran in one of the project's own stage ranges
    (NVTX ``pr_...``, see :data:`OWN_NVTX_PREFIX`), else None: its expectations apply only then."""
    ranges = capture.launches()["nvtx_range"].fillna("")
    return manifest if len(ranges) and ranges.str.contains(OWN_NVTX_PREFIX, regex=False).all() else None


_TIMING_KEYS = ("name", "median_us", "p10_us", "p90_us", "gbps")


def load_run(path: Path, labels: list[tuple[str, str]] | None = None) -> Run:
    """Read, label and analyze a capture plus ``timings.json`` / ``provenance.json`` beside it.

    Args:
        path: a .ncu-rep or raw-page CSV export.
        labels: ``--stage`` (label, regex) pairs; None labels the project's own stages by their
            NVTX ranges and any other capture's launches by kernel name.

    Raises:
        ReportUnreadableError: the capture cannot be read.
        InputError: a sidecar is corrupt, or a ``--stage`` pattern is bad.
    """
    path = Path(path)
    capture = read_capture(path)
    side = read_sidecars(path.parent)
    timings = side.timings
    if timings is not None:
        if not isinstance(timings, list) or not all(isinstance(t, dict) and all(k in t for k in _TIMING_KEYS)
                                                    for t in timings):
            raise InputError(f"{path.parent / 'timings.json'}: 'timings' must list entries with "
                             + ", ".join(_TIMING_KEYS), "regenerate it with `profiler-report run`")
    manifest = None if labels else own_manifest_for(capture, load_manifest())
    analysis = analyze(capture, manifest, labels, timings)
    return Run(path, capture, analysis, side, manifest)
