"""A case's experiments (the transpose's padding sweep): each one's own capture and sidecar read
once, into the table the page shows (:class:`~profiler_report.model.experiment.ExperimentTable`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from profiler_report.capture.load import read_capture
from profiler_report.capture.readahead import PendingRead, start_read
from profiler_report.errors import InputError, ProfilerReportError
from profiler_report.model.base import Case
from profiler_report.model.experiment import ExperimentTable
from profiler_report.model.registry import REGISTRY, get_case

#: How far below the main capture's read an experiment capture's read runs (``nice``): a render
#: waits for the main capture first (its analysis comes before the experiments' tables). On 2
#: CPUs an equal share slowed the main read enough to add ~0.4 s to a ~3 s render; at 5 the
#: experiment's read still gets its part of a CPU that another program keeps busy (with one
#: such program running, renders took as long as with an equal share; at 10, 0.2 s longer).
EXPERIMENT_READ_NICE = 5


def start_experiment_reads(folder: Path, case: Case | None = None) -> dict[Path, PendingRead]:
    """The reads of the experiments' captures in ``folder`` (:func:`experiment_tables`' files),
    started now in child processes, beside the main capture's (read after it, the padding sweep's
    capture alone added ~1.2 s to a render on 2 CPUs). The case is ``case`` (``--case``) or the
    one provenance.json names, a guess made before the capture is read: :func:`experiment_tables`
    reads any file not started here, and the caller closes the reads it did not use."""
    case = case or _recorded_case(folder)
    reads = {}
    for exp in case.experiments() if case else ():
        rep = folder / f"{exp.id}.ncu-rep"
        read = start_read(rep, nice=EXPERIMENT_READ_NICE)
        if read is not None:
            reads[rep] = read
    return reads


def _recorded_case(folder: Path) -> Case | None:
    """The case provenance.json in ``folder`` names, found as
    :func:`~profiler_report.analysis.stages.own_case` finds it; None when there is none, or it
    cannot be loaded (the capture's own lookup then says why)."""
    try:
        prov = json.loads((folder / "provenance.json").read_text())
        name, recorded = str(prov.get("case") or ""), str(prov.get("case_dir") or "")
        if name in REGISTRY:
            return get_case(name)
        return get_case(recorded) if recorded and Path(recorded).expanduser().is_dir() else None
    except (OSError, ValueError, AttributeError, ProfilerReportError):
        return None


def experiment_tables(case: Case | None, folder: Path,
                      started: Mapping[Path, PendingRead] | None = None) -> list[ExperimentTable]:
    """Each of ``case``'s experiments from ``folder/<id>.ncu-rep`` and ``<id>.json`` (a live
    run's report folder, or the one a recorded capture sits in); an experiment without its
    capture is shown with its predictions alone. ``started``: reads begun earlier
    (:func:`start_experiment_reads`), used for the files they are of.

    Raises:
        ReportUnreadableError: an experiment's capture is there but cannot be read.
        InputError: its ``<id>.json`` is not JSON.
    """
    tables = []
    for exp in case.experiments() if case else ():
        rep, side = folder / f"{exp.id}.ncu-rep", folder / f"{exp.id}.json"
        meta: dict[str, Any] = {}
        if side.is_file():
            try:
                meta = json.loads(side.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"cannot read {side}: {exc}", "delete it or rerun `profiler-report run`") from exc
        capture = read_capture(rep, pending=(started or {}).get(rep)) if rep.is_file() else None
        table = exp.table(capture, meta.get("points") if isinstance(meta, dict) else None)
        if isinstance(meta, dict) and meta.get("error"):
            table.notes.append(f"The live run could not record this experiment: {meta['error']}")
        elif capture is not None and isinstance(meta, dict) and meta.get("date_utc"):
            table.notes.append(f"Its own capture ({rep.name}): recorded {meta['date_utc']} on {meta.get('gpu', '?')} "
                               f"at commit {meta.get('commit', '?')}, ncu {meta.get('ncu_version', '?')}, "
                               f"clock control {meta.get('clock_control', '?')}, "
                               # ncu's comma-joined metric list, spaced so the line wraps on a narrow page
                               f"{str(meta.get('ncu_options', '')).replace(',', ', ')}.")
        tables.append(table)
    return tables
