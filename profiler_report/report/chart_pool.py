"""Chart worker processes: the page's charts drawn side by side in forked workers."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.pool import AsyncResult
from typing import Any

from profiler_report.report.charts import ChartJob, draw_here, draw_quietly

#: Linux prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _worker_init(parent: int) -> None:
    """Set up a chart worker.

    Workers leave Ctrl-C to the parent: a worker interrupted while it holds the pool's queue lock
    would hang the parent's shutdown, and each would print a traceback; the parent ends them
    (SIGTERM) when it leaves the pool. A worker also dies with its parent: after a SIGKILL of the
    parent alone, orphaned workers would finish their chart and print a BrokenPipeError traceback
    each on the terminal. On Linux the kernel kills them (PR_SET_PDEATHSIG); elsewhere their
    stderr goes to /dev/null (job errors still reach the parent, pickled with the result).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _die_with_parent():
        sys.stderr = open(os.devnull, "w")  # kept open for the worker's whole life
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(0)


def _die_with_parent() -> bool:
    """Ask the kernel for SIGKILL when the parent exits; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Drawn(Mapping[str, Any]):
    """Chart results by job key; one still drawing in a pool's worker is waited for when first
    looked up (the page is built while its later charts are drawn). ``a | b``: both's results."""

    def __init__(self, results: Mapping[str, Any]) -> None:
        self._results = dict(results)  # a result, or the AsyncResult of a job still in the pool

    def __getitem__(self, key: str) -> Any:
        value = self._results[key]
        if isinstance(value, AsyncResult):
            value = self._results[key] = value.get()  # raises what the job raised
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._results  # without waiting for it

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def __or__(self, other: Drawn) -> Drawn:
        return Drawn({**self._results, **other._results})


class ChartPool:
    """Worker processes, forked on creation, that draw chart jobs side by side.

    With ``workers`` <= 1, or where no pool can be made (no fork, no /dev/shm for its
    semaphores), jobs run in this process when their results are asked for. Fork only from a
    process that holds no CUDA context (not from a live run). Python 3.12+ warns (a
    DeprecationWarning, hidden by default) that forking a threaded process may deadlock: the only
    other threads here are OpenBLAS's (numpy's), which it stops at fork (pthread_atfork). Use it
    as a context manager: leaving it ends the workers.
    """

    def __init__(self, workers: int) -> None:
        self._pool: multiprocessing.pool.Pool | None = None
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            try:
                self._pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_init,
                                                                      initargs=(os.getpid(),))
            except OSError:
                self._pool = None

    def draw(self, jobs: dict[str, ChartJob]) -> Callable[[], dict[str, Any]]:
        """Start ``jobs``; return a function that waits for them and returns ``{key: result}``.

        The function raises whatever a job raised.
        """
        if self._pool is None:
            return lambda: draw_here(jobs)
        started = self._start(jobs)
        return lambda: {key: result.get() for key, result in started.items()}

    def draw_lazily(self, jobs: dict[str, ChartJob]) -> Callable[[], Drawn]:
        """As :meth:`draw`, but the function returns them as :class:`Drawn`: each waited for
        when first looked up, which must be before the pool closes (closing ends the jobs
        still drawing: they give no result)."""
        if self._pool is None:
            return lambda: Drawn(draw_here(jobs))
        started = self._start(jobs)
        return lambda: Drawn(started)

    def _start(self, jobs: dict[str, ChartJob]) -> dict[str, AsyncResult[Any]]:
        assert self._pool is not None
        return {key: self._pool.apply_async(draw_quietly, (fn, *args)) for key, (fn, args) in jobs.items()}

    def close(self) -> None:
        """End the workers (safe to call twice)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> ChartPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
