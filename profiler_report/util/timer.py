"""Where a command's time went: :class:`StepTimer` times named steps (read, analyze, page, write)
and prints them as one table on stderr; :func:`log` writes one progress line there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class StepTimer:
    """Where a run's wall time went, step by step (printed at the end of a run).

    ``progress``: log a line as each step starts and ends; off where a failure must print its
    error line alone (``render``), which then logs only :meth:`table`, on success.
    """

    steps: list[tuple[str, float]] = field(default_factory=list)
    progress: bool = True

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        t0 = time.monotonic()
        if self.progress:
            log(f"[{name}] ...")
        try:
            yield
        finally:
            self.steps.append((name, time.monotonic() - t0))
            if self.progress:
                log(f"[{name}] {self.steps[-1][1]:.1f} s")

    def table(self) -> str:
        total = sum(s for _, s in self.steps)
        lines = [f"  {n:<12} {s:7.1f} s" for n, s in self.steps]
        return "time spent:\n" + "\n".join(lines) + f"\n  {'total':<12} {total:7.1f} s"
