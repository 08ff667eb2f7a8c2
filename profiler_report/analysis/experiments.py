"""A case's experiments (the transpose's padding sweep): each one's own capture and sidecar read
once, into the table the page shows (:class:`~profiler_report.model.experiment.ExperimentTable`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from profiler_report.capture.load import read_capture
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.experiment import ExperimentTable


def experiment_tables(case: Case | None, folder: Path) -> list[ExperimentTable]:
    """Each of ``case``'s experiments from ``folder/<id>.ncu-rep`` and ``<id>.json`` (a live
    run's report folder, or the one a recorded capture sits in); an experiment without its
    capture is shown with its predictions alone.

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
        capture = read_capture(rep) if rep.is_file() else None
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
