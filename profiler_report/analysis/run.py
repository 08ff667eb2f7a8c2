"""A run loaded for judging: a capture, its sidecar files and its analysis.

The input side of every command: :func:`load_run` reads a capture (:mod:`profiler_report.capture`)
and the sidecar files beside it, finds the case that made it, labels and analyzes it
(:func:`profiler_report.analysis.analyze`) and returns a :class:`Run` for the gate, the diff and
the report. Nothing here imports the HTML layer or the GPU side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import pandas as pd

from profiler_report.analysis import Analysis, analyze, break_steps
from profiler_report.analysis.compare import ladder_mixed
from profiler_report.analysis.stages import own_case
from profiler_report.capture.load import read_capture
from profiler_report.capture.model import Capture, merge_captures
from profiler_report.capture.readahead import PendingRead, start_read
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.manifest import load_expectations
from profiler_report.util.frames import tuples

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


def own_stages(capture: Capture, stage_ids: list[str]) -> Capture:
    """``capture`` with only the launches in the own NVTX ranges of ``stage_ids`` (any case)."""
    from dataclasses import replace

    from profiler_report.model.ranges import own_range

    launches = capture.launches()
    wanted = set(stage_ids)
    ids = {int(r.launch_id) for r in tuples(launches)
           if (own := own_range(str(r.nvtx_range or ""))) is not None and own[1] in wanted}

    def pick(frame: pd.DataFrame) -> pd.DataFrame:
        return frame if frame.empty else frame[frame["launch_id"].isin(ids)].reset_index(drop=True)

    return replace(capture, metrics=pick(capture.metrics), rules=pick(capture.rules), source=pick(capture.source))


@dataclass(frozen=True)
class LoadOptions:
    """:func:`load_run`'s options beyond the capture and its ``--stage`` labels.

    Attributes:
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
        keep: with a list of captures, the own stages (NVTX ranges ``pr_<case>.<stage>``) to take
            from each, one list per entry of ``path`` (a live run that reused some stages'
            captures: a file may be listed more than once, it is read once).
    """

    pending: PendingRead | list[PendingRead | None] | None = None
    sidecars: Sidecars | None = None
    case: Case | None = None
    ceilings: list[tuple[str, str]] | None = None
    expect: Path | None = None
    name_by_file: bool = False
    keep: list[list[str]] | None = None


class LoadKeywords(TypedDict, total=False):
    """:func:`load_run`'s keyword arguments: the fields of :class:`LoadOptions`."""

    pending: PendingRead | list[PendingRead | None] | None
    sidecars: Sidecars | None
    case: Case | None
    ceilings: list[tuple[str, str]] | None
    expect: Path | None
    name_by_file: bool
    keep: list[list[str]] | None


def load_run(path: Path | list[Path], labels: list[tuple[str, str]] | None = None,
             **opts: Unpack[LoadKeywords]) -> Run:
    """Read, label and analyze a capture plus the sidecar files beside it: the one loader every
    command uses (each capture is read once).

    Args:
        path: a .ncu-rep, or a raw- or details-page CSV export; or a list of them, one ladder in
            the order given (:func:`~profiler_report.capture.model.merge_captures`; a ladder of
            several files has no sidecars: their timings are of different runs).
        labels: ``--stage`` (label, regex) pairs; None labels the project's own stages by their
            NVTX ranges (and judges their case's expected effects) and any other capture's
            launches by file name (one launch per file) or kernel name.
        opts: ``pending``, ``sidecars``, ``case``, ``ceilings``, ``expect``, ``name_by_file``
            and ``keep``: see :class:`LoadOptions`.

    Raises:
        ReportUnreadableError: a capture cannot be read.
        InputError: a sidecar is corrupt, a ``--stage``/``--ceiling`` pattern is bad or matches
            nothing, or the ``--expect`` file is bad or names a stage the capture lacks.
    """
    o = LoadOptions(**opts)
    listed = [Path(p) for p in path] if isinstance(path, list | tuple) else [Path(path)]
    paths = list(dict.fromkeys(listed)) if o.keep is not None else listed
    captures = _read_captures(paths, o.pending)
    if o.keep is not None:
        by_path = dict(zip(paths, captures, strict=True))
        captures = [own_stages(by_path[p], ids) for p, ids in zip(listed, o.keep, strict=True)]
    capture = merge_captures(captures)
    side = o.sidecars if o.sidecars is not None else read_sidecars(paths[0].parent) if len(paths) == 1 else Sidecars()
    timings = side.timings
    if timings is not None:
        _check_timings(timings, paths[0].parent / "timings.json")
    case = None if labels or o.expect is not None else own_case(capture, side.provenance, o.case)
    wanted = load_expectations(o.expect) if o.expect is not None else None
    analysis = analyze(capture, case.manifest if case else None, labels, timings, o.ceilings, wanted,
                       o.name_by_file, case.name if case else "")
    if len(captures) > 1:
        _mark_mixed(analysis, captures, capture.origins)
    return Run(paths[0], capture, analysis, side, case)


def _read_captures(paths: list[Path], pending: PendingRead | list[PendingRead | None] | None) -> list[Capture]:
    """Each of ``paths`` read (through its ``pending`` read where one was started); several files
    with none started are read side by side."""
    reads = pending if isinstance(pending, list) else [pending]
    if len(paths) > 1 and pending is None:  # every file's children read side by side
        reads = [start_read(p) for p in paths]
    try:
        return [read_capture(p, pending=r) for p, r in zip(paths, reads, strict=True)]
    finally:
        for r in reads:
            if r is not None:
                r.close()


def _check_timings(timings: object, where: Path) -> None:
    """InputError unless ``timings`` (timings.json's) lists entries with every key of :data:`_TIMING_KEYS`."""
    if not isinstance(timings, list) or not all(isinstance(t, dict) and all(k in t for k in _TIMING_KEYS)
                                                for t in timings):
        raise InputError(f"{where}: 'timings' must list entries with "
                         + ", ".join(_TIMING_KEYS), "regenerate it with `profiler-report run`")


def _mark_mixed(analysis: Analysis, captures: list[Capture], origins: dict[int, str]) -> None:
    """A ladder whose files are not comparable (:func:`~profiler_report.analysis.compare.ladder_mixed`):
    ``analysis.mixed`` says what differs, and the first stage of each file after a file it is not
    comparable with takes no step from the stage before (no cross-capture ratio). The commands
    refuse such a ladder unless ``--allow-mixed`` (:func:`refuse_mixed`)."""
    mixed = ladder_mixed(captures, analysis.summary, origins)
    if not mixed:
        return
    analysis.mixed = mixed
    why = "it is from another capture, not comparable with the one before (" + \
        "; ".join(f"{k}: {v}" for k, v in mixed.items()) + ")"
    rows = analysis.summary[analysis.summary["role"] == "stage"]
    files = [origins.get(int(i), "") for i in rows["launch_id"]]
    break_steps(analysis, {str(s): why for s, f, before in zip(rows["stage"], files, ["", *files], strict=False)
                           if before and f != before})


def refuse_mixed(run: Run, allow_mixed: bool) -> None:
    """InputError (exit 2) for a ladder of captures that are not comparable, unless ``allow_mixed``.

    Raises:
        InputError: naming what differs between the files.
    """
    if run.analysis.mixed and not allow_mixed:
        text = "; ".join(f"{k}: {v}" for k, v in run.analysis.mixed.items())
        raise InputError(f"the captures of this ladder are not comparable ({text})",
                         "give captures of one GPU, size and dtype, or --allow-mixed to show them side by side "
                         "(then no ratio is taken between two captures)")


def reused_run(capture: Path | list[Path], ladder: dict[str, Any],
               timer: Any = None) -> tuple[Run | None, Path | list[Path]]:
    """(the run loaded, its captures) when ``capture`` is the profile.ncu-rep of a live run that
    reused some stages' captures (its folder's profile-parts.json): the whole ladder, from every
    file that holds one of its stages; else (None, ``capture``) as given. ``ladder``: load_run's
    ``labels``, ``ceilings`` and ``case``; ``timer``: a StepTimer to record the read in."""
    from profiler_report.capture.parts import read_parts
    from profiler_report.util.timer import StepTimer

    if isinstance(capture, list) or ladder["labels"] or ladder["ceilings"]:
        return None, capture
    parts = read_parts(capture.parent)
    if not parts or capture.resolve() not in {p.resolve() for p, _ in parts}:
        return None, capture
    files = [p for p, _ in parts]
    with (timer or StepTimer(progress=False)).step("read"):
        run = load_run(files, case=ladder["case"], sidecars=read_sidecars(capture.parent), keep=[s for _, s in parts])
    return run, files

