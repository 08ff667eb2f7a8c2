"""One entry point for every capture format: :func:`read_capture` reads an ``.ncu-rep`` (through
ncu_report) or a raw-page / details-page CSV export into a :class:`~profiler_report.capture.model.Capture`.
"""

from __future__ import annotations

from pathlib import Path

from profiler_report.capture import parsed
from profiler_report.capture.csv_raw import _looks_like_csv, read_csv
from profiler_report.capture.model import Capture, _check_file
from profiler_report.capture.ncu_rep import read_ncu_rep
from profiler_report.capture.readahead import PendingRead, ncu_rep_format


def read_capture(path: str | Path, pending: PendingRead | None = None) -> Capture:
    """Read a ``.ncu-rep``, or a raw-page or details-page CSV export, chosen by the file's content.

    ``pending``: a read of the ``.ncu-rep`` at ``path`` already started (see :func:`read_ncu_rep`).
    A ``.ncu-rep`` read before (same content, same reader) comes from the result cache
    (:mod:`~profiler_report.capture.parsed`).

    Raises:
        ReportUnreadableError: see :func:`read_ncu_rep` and :func:`read_csv`.
    """
    path = Path(path)
    _check_file(path)
    if ncu_rep_format(path) is not None:
        kept = parsed.load(path)  # read before: the tables, not ncu_report again
        if kept is not None:
            if pending is not None:
                pending.close()
            return kept
        capture = read_ncu_rep(path, pending=pending)
        parsed.store(path, capture)
        return capture
    with path.open("rb") as fh:
        head = fh.read(4096)
    if path.suffix.lower() == ".csv" or _looks_like_csv(head):
        return read_csv(path)
    return read_ncu_rep(path)  # raises "not an Nsight Compute report"


def main(argv: list[str] | None = None) -> int:
    """``python -m profiler_report.capture.load PATH... [--nice N]``: read each capture now, keeping
    its tables in the result cache, so that the next read of the same content loads them (a live
    run reads its main capture this way while its experiments are profiled). ``--nice N``: first
    lower this process's CPU priority by N (where the OS has ``nice``), as the reader child does.
    Exit 1 when one could not be read."""
    import argparse
    import os
    import sys

    from profiler_report.errors import ProfilerReportError

    parser = argparse.ArgumentParser(prog="python -m profiler_report.capture.load")
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--nice", type=int, default=0)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.nice and hasattr(os, "nice"):
        os.nice(args.nice)
    status = 0
    for name in args.paths:
        try:
            read_capture(name)
        except ProfilerReportError as exc:
            print(f"profiler-report: {exc.message}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
