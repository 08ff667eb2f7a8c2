"""Step timer and progress: where a run's wall time goes, phase by phase, and how far a long
phase has got (stage i of n, with an estimate from the last run of the same kind)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

#: Whether an updating progress line is on stderr now (a log line first clears it).
_LIVE = [False]


def log(msg: str) -> None:
    if _LIVE[0]:
        sys.stderr.write("\r\x1b[K")
        _LIVE[0] = False
    print(msg, file=sys.stderr, flush=True)


def _tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass
class StepTimer:
    """Where a run's wall time went, step by step (printed at the end of a run).

    ``progress``: log a line as each step starts and ends; off where a failure must print its
    error line alone (``render``), which then logs only :meth:`table`, on success.
    ``estimates``: seconds each step took last time (the result cache's record of the same
    case, size and dtype), shown when the step starts and in its progress line.
    """

    steps: list[tuple[str, float]] = field(default_factory=list)
    progress: bool = True
    estimates: dict[str, float] = field(default_factory=dict)
    _current: tuple[str, float] | None = field(default=None, repr=False)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        t0 = time.monotonic()
        self._current = (name, t0)
        if self.progress:
            est = self.estimates.get(name)
            log(f"[{name}] ..." + (f" (last run: {est:.1f} s)" if est is not None else ""))
        try:
            yield
        finally:
            self._current = None
            self.steps.append((name, time.monotonic() - t0))
            if self.progress:
                log(f"[{name}] {self.steps[-1][1]:.1f} s")

    def add(self, name: str, seconds: float) -> None:
        """A step timed by its caller (one that must print nothing when it fails, such as the
        run's setup, whose error line stays alone)."""
        self.steps.append((name, seconds))

    def tick(self, i: int, n: int, label: str) -> None:
        """Progress of the current step: item ``i`` of ``n`` (``label`` names it). On a terminal
        one line updated in place, with the time left by the last run's estimate; else a plain
        line per item."""
        if not self.progress or self._current is None:
            return
        name, t0 = self._current
        spent = time.monotonic() - t0
        est = self.estimates.get(name)
        left = f", about {max(est - spent, 0):.0f} s left (last run {est:.0f} s)" if est else ""
        text = f"[{name}] {i} of {n}: {label} ({spent:.0f} s{left})"
        if _tty():
            sys.stderr.write("\r\x1b[K" + text[:200])
            sys.stderr.flush()
            _LIVE[0] = True
        else:
            log(text)

    def table(self) -> str:
        total = sum(s for _, s in self.steps)
        lines = [f"  {n:<12} {s:7.1f} s" for n, s in self.steps]
        return "time spent:\n" + "\n".join(lines) + f"\n  {'total':<12} {total:7.1f} s"
