"""A run loaded for judging: a capture, its sidecar files and its analysis.

The input side of every command: :func:`load_run` reads a capture (:mod:`profiler_report.capture`)
and the sidecar files beside it, finds the case that made it, labels and analyzes it
(:func:`profiler_report.analysis.analyze`) and returns a :class:`Run` for the gate, the diff and
the report. Nothing here imports the HTML layer or the GPU side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.analysis import Analysis, analyze
from profiler_report.analysis.stages import own_case
from profiler_report.capture.load import read_capture
from profiler_report.capture.model import Capture
from profiler_report.capture.readahead import PendingRead
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.cases.base import Case
from profiler_report.errors import InputError

if TYPE_CHECKING:
    pass


@dataclass
class Run:
    """One capture ready to check: the analysis, its sidecars and what makes it comparable."""

    path: Path
    capture: Capture
    analysis: Analysis
    sidecars: Sidecars  # timings.json, provenance.json, validation.json, ... beside the capture
    case: Case | None = None  # the case that made the capture; None for a capture made elsewhere

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


def load_run(path: Path, labels: list[tuple[str, str]] | None = None, *, pending: PendingRead | None = None,
             sidecars: Sidecars | None = None, case: Case | None = None) -> Run:
    """Read, label and analyze a capture plus the sidecar files beside it: the one loader every
    command uses (each capture is read once).

    Args:
        path: a .ncu-rep, or a raw- or details-page CSV export.
        labels: ``--stage`` (label, regex) pairs; None labels the project's own stages by their
            NVTX ranges (and judges their case's expected effects) and any other capture's
            launches by kernel name.
        pending: a read of ``path`` already started (:func:`~profiler_report.capture.readahead.start_read`).
        sidecars: the sidecar files, when already read.
        case: the case that made the capture (``--case DIR`` for a user's case folder); None
            finds it from the capture's NVTX ranges and provenance.json.

    Raises:
        ReportUnreadableError: the capture cannot be read.
        InputError: a sidecar is corrupt, or a ``--stage`` pattern is bad.
    """
    path = Path(path)
    side = sidecars if sidecars is not None else read_sidecars(path.parent)
    capture = read_capture(path, pending=pending)
    timings = side.timings
    if timings is not None:
        if not isinstance(timings, list) or not all(isinstance(t, dict) and all(k in t for k in _TIMING_KEYS)
                                                    for t in timings):
            raise InputError(f"{path.parent / 'timings.json'}: 'timings' must list entries with "
                             + ", ".join(_TIMING_KEYS), "regenerate it with `profiler-report run`")
    case = None if labels else own_case(capture, side.provenance, case)
    analysis = analyze(capture, case.manifest if case else None, labels, timings)
    return Run(path, capture, analysis, side, case)
