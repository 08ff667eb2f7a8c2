"""Reading an ``.ncu-rep`` file into a :class:`~profiler_report.capture.model.Capture`: the
ncu_report module runs in a child process (:mod:`.reader_child`, started early by
:mod:`.readahead`), under a timeout; a file without launches or unreadable is one error line.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from profiler_report.capture.model import (
    METRIC_COLUMNS,
    RULE_COLUMNS,
    SOURCE_COLUMNS,
    Capture,
    _check_file,
    check_values,
    dedupe_metrics,
)
from profiler_report.capture.readahead import COMPRESSED, PendingRead, ncu_rep_format
from profiler_report.capture.reader_child import SOURCE_LAUNCHES
from profiler_report.errors import ReportUnreadableError

#: Report format version written by the ncu releases this tool is tested with (2025.x).
NCU_REP_FORMAT = 2


def read_ncu_rep(path: str | Path, timeout_s: float | None = None, pending: PendingRead | None = None) -> Capture:
    """Read every launch of a ``.ncu-rep`` (or of an ``.ncu-repz``, its zstd-compressed form)
    into a :class:`Capture`.

    Metrics with a numeric value become rows (instanced values are left out: the aggregate is
    kept). Guided-analysis rule results go to ``rules``; per-instruction values (``inst_executed``
    and the shared-memory wavefront metrics, by PC) go to ``source``. ncu_report runs in child
    processes (see :mod:`profiler_report.capture.reader_child` for why); ``pending`` is a read of ``path``
    started earlier with :func:`profiler_report.capture.readahead.start_read`, else one starts here and
    may take ``timeout_s`` seconds (default: bounded by the file's size,
    :func:`~profiler_report.capture.readahead.read_timeout_s`).

    Raises:
        ReportUnreadableError: missing, empty, a directory, not a report (no ``NVR`` header),
            truncated or corrupt, from an ncu version this ``ncu_report`` cannot read, holding an
            impossible value (:func:`~profiler_report.capture.model.check_values`), or
            ncu_report is not installed, crashed on it or ran past its timeout.
        ValueError: ``pending`` reads another file.
    """
    path = Path(path)
    if pending is not None and pending.path != path:
        raise ValueError(f"the pending read is of {pending.path}, not {path}")
    _check_file(path)
    fmt = ncu_rep_format(path)
    if fmt is None:
        raise ReportUnreadableError(f"{path} is not an Nsight Compute report (no NVR header, nor an .ncu-repz)")
    data = (pending or PendingRead(path, timeout_s)).raw()
    if data.get("error") == "no-module":
        raise ReportUnreadableError("the ncu_report module is not installed", "pip install ncu-report")
    if data.get("error"):
        raise ReportUnreadableError(
            f"{path} is not a readable Nsight Compute report ({data['error']}; read with "
            f"{data.get('reader', 'ncu_report')})",
            "pass a complete .ncu-rep; a capture from an ncu newer than the reader needs a newer reader: "
            "`pip install -U ncu-report`, or the ncu_report bundled with that ncu (picked when newer; "
            "`profiler-report doctor` names both)",
        )
    if not data["rows"]:
        raise _no_launch_error(path, fmt, data.get("reader", ""))
    n = data["launches"]
    notes = [f"Per-instruction attribution was read for the first {SOURCE_LAUNCHES} of {n} launches only."] \
        if n > SOURCE_LAUNCHES else []
    metrics = dedupe_metrics(pd.DataFrame(data["rows"], columns=METRIC_COLUMNS))
    check_values(metrics, path)
    return Capture(metrics, pd.DataFrame(data["rules"], columns=RULE_COLUMNS), path, "ncu-rep", data["device"],
                   data["version"], pd.DataFrame(data["source"], columns=SOURCE_COLUMNS), data["files"], notes)


def _no_launch_error(path: Path, fmt: int, reader: str) -> ReportUnreadableError:
    """Why a report with an NVR header yields no launch: another format version, else truncation."""
    reader = reader or "ncu_report"
    if fmt not in (NCU_REP_FORMAT, COMPRESSED):
        return ReportUnreadableError(
            f"{path} uses report format version {fmt}, which {reader} read no kernel launch from "
            f"(ncu 2025.x writes format {NCU_REP_FORMAT}): it was written by a much newer or older ncu",
            "install a reader at least as new as the ncu that wrote it (`pip install -U ncu-report`; "
            "`profiler-report doctor` names the versions), or export a raw CSV with that ncu "
            "(`ncu --import R --csv --page raw`)",
        )
    return ReportUnreadableError(
        f"{path} holds no readable kernel launch: the file is truncated or corrupt, or ncu profiled nothing",
        "re-copy or re-export the capture; check ncu's filters matched a kernel",
    )
