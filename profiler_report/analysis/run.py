"""A run loaded for judging: a capture, its sidecar files and its analysis."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.analysis import Analysis, analyze
from profiler_report.capture.load import read_capture
from profiler_report.capture.model import Capture
from profiler_report.errors import InputError

if TYPE_CHECKING:
    pass


@dataclass
class Run:
    """One capture ready to check: the analysis, its sidecars and what makes it comparable."""

    path: Path
    capture: Capture
    analysis: Analysis
    sidecars: Any  # report.Sidecars: timings.json, provenance.json, validation.json, ...
    manifest: Any = None  # config.Manifest for the project's own captures, else None

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
        return self.analysis.summary

    def stages(self) -> list[str]:
        """Every stage label (ceiling rows included), in launch order."""
        return [str(s) for s in self.summary["stage"]]


_TIMING_KEYS = ("name", "median_us", "p10_us", "p90_us", "gbps")


def load_run(path: Path, labels: list[tuple[str, str]] | None = None) -> Run:
    """Read, label and analyze a capture plus ``timings.json`` / ``provenance.json`` beside it.

    Raises:
        ReportUnreadableError: the capture cannot be read.
        InputError: a sidecar is corrupt, or a ``--stage`` pattern is bad.
    """
    from profiler_report.capture.sidecars import read_sidecars
    from profiler_report.cases.manifest import load_manifest
    from profiler_report.report.build import own_manifest_for

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
