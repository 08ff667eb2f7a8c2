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
from profiler_report.capture.model import Capture, merge_captures
from profiler_report.capture.readahead import PendingRead, start_read
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.manifest import load_expectations

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


def load_run(path: Path | list[Path], labels: list[tuple[str, str]] | None = None, *,
             pending: PendingRead | list[PendingRead | None] | None = None, sidecars: Sidecars | None = None,
             case: Case | None = None, ceilings: list[tuple[str, str]] | None = None,
             expect: Path | None = None, name_by_file: bool = False) -> Run:
    """Read, label and analyze a capture plus the sidecar files beside it: the one loader every
    command uses (each capture is read once).

    Args:
        path: a .ncu-rep, or a raw- or details-page CSV export; or a list of them, one ladder in
            the order given (:func:`~profiler_report.capture.model.merge_captures`; a ladder of
            several files has no sidecars: their timings are of different runs).
        labels: ``--stage`` (label, regex) pairs; None labels the project's own stages by their
            NVTX ranges (and judges their case's expected effects) and any other capture's
            launches by file name (one launch per file) or kernel name.
        pending: the read of ``path`` already started (:func:`~profiler_report.capture.readahead.start_read`),
            one per file for a list.
        sidecars: the sidecar files, when already read.
        case: the case that made the capture (``--case DIR`` for a user's case folder); None
            finds it from the capture's NVTX ranges and provenance.json.
        ceilings: ``--ceiling`` (label, regex) pairs: reference launches, never stages.
        expect: ``--expect FILE``: expected effects (stages.toml format) to judge on the labelled
            stages of a capture made elsewhere.
        name_by_file: in a list of captures, name an own stage that several files hold ``STAGE (FILE)``
            (the profiled sweep's report: one capture per point) instead of ``STAGE#2``.

    Raises:
        ReportUnreadableError: a capture cannot be read.
        InputError: a sidecar is corrupt, a ``--stage``/``--ceiling`` pattern is bad or matches
            nothing, or the ``--expect`` file is bad or names a stage the capture lacks.
    """
    paths = [Path(p) for p in path] if isinstance(path, list | tuple) else [Path(path)]
    reads = pending if isinstance(pending, list) else [pending]
    if len(paths) > 1 and pending is None:  # every file's children read side by side
        reads = [start_read(p) for p in paths]
    try:
        captures = [read_capture(p, pending=r) for p, r in zip(paths, reads, strict=True)]
    finally:
        for r in reads:
            if r is not None:
                r.close()
    capture = merge_captures(captures)
    side = sidecars if sidecars is not None else read_sidecars(paths[0].parent) if len(paths) == 1 else Sidecars()
    timings = side.timings
    if timings is not None:
        if not isinstance(timings, list) or not all(isinstance(t, dict) and all(k in t for k in _TIMING_KEYS)
                                                    for t in timings):
            raise InputError(f"{paths[0].parent / 'timings.json'}: 'timings' must list entries with "
                             + ", ".join(_TIMING_KEYS), "regenerate it with `profiler-report run`")
    case = None if labels or expect is not None else own_case(capture, side.provenance, case)
    wanted = load_expectations(expect) if expect is not None else None
    analysis = analyze(capture, case.manifest if case else None, labels, timings, ceilings, wanted, name_by_file)
    return Run(paths[0], capture, analysis, side, case)
