"""Chart worker processes."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

from profiler_report.report.charts import ChartJob


def _ignore_sigint() -> None:
    """Chart workers leave Ctrl-C to the parent: a worker interrupted while it holds the pool's
    queue lock would hang the parent's shutdown, and each would print a traceback. The parent
    ends them (SIGTERM) when it leaves the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
                self._pool = multiprocessing.get_context("fork").Pool(workers, initializer=_ignore_sigint)
            except OSError:
                self._pool = None

    def draw(self, jobs: dict[str, ChartJob]) -> Callable[[], dict[str, Any]]:
        """Start ``jobs``; return a function that waits for them and returns ``{key: result}``.

        The function raises whatever a job raised.
        """
        if self._pool is None:
            return lambda: {key: fn(*args) for key, (fn, args) in jobs.items()}
        started = {key: self._pool.apply_async(fn, args) for key, (fn, args) in jobs.items()}
        return lambda: {key: result.get() for key, result in started.items()}

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
