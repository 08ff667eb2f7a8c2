"""A live run's captures read into the result cache by a child process while ncu profiles the
case's experiments and the peers are timed (CPU only: the experiments' counters and the peers'
GPU times are unchanged), so that the render loads their tables instead of reading them
(:mod:`profiler_report.capture.parsed`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: How far below the run the read runs (``nice``): ncu and its target, and the peers' process, which
#: it runs beside, come first.
READ_NICE = 5


def read_ahead(captures: list[Path]) -> subprocess.Popen[bytes] | None:
    """The ladder's captures read now, at a lower CPU priority, into the result cache
    (``python -m profiler_report.capture.load``), while ncu profiles the experiments and the peers
    are timed: the render then loads their tables instead of reading them. Only the CPU is used, so
    the experiments' counters are unchanged. None when there is nothing to read."""
    if not captures:
        return None
    return subprocess.Popen([sys.executable, "-m", "profiler_report.capture.load", *map(str, captures),
                             "--nice", str(READ_NICE)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def join(proc: subprocess.Popen[bytes] | None, timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for :func:`read_ahead`'s child, then stop it if it still runs (the
    render reads what it did not)."""
    if proc is None:
        return
    from profiler_report.live.ncu import _kill

    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:
            _kill(proc)
