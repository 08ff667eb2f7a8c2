"""The page's marks for results a live run reused from the result cache (``reuse.json``, written
by :mod:`profiler_report.live.reuse`): what was reused, from which date and commit, which figures
were re-timed in this run, the configuration chosen for the shape, and the cache's notes.

Self-contained page data: :func:`reuse_marks` -> :class:`ReuseMarks`, drawn by
``templates/_reuse.html.j2``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REUSE_FILE = "reuse.json"


@dataclass(frozen=True)
class ReuseMarks:
    """``reused``: (what, stage or "", date, commit) per reused result; ``retimed``: the timings
    taken in this run; ``choices``: one line per configuration chosen for the shape; ``notes``:
    entries found stale or corrupt (recomputed); ``fresh``: ``run --fresh``; ``cache``: its folder."""

    reused: list[tuple[str, str, str, str]] = field(default_factory=list)
    retimed: list[str] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fresh: bool = False
    cache: str = ""

    @property
    def summary(self) -> str:
        """One sentence: how much was reused and what was re-timed."""
        if not self.reused:
            head = "Nothing was reused: every result on this page was made by this run" + (
                " (--fresh)" if self.fresh else "")
        else:
            kinds = sorted({w for w, *_ in self.reused})
            head = f"{len(self.reused)} results were reused from the result cache ({', '.join(kinds)}; listed below)"
        timed = f"; event-timed in this run, in one process: {', '.join(self.retimed)}" if self.retimed else ""
        return head + timed + "."


def _choice_line(c: dict[str, Any]) -> str:
    runner = (f"runner-up {c['runner_up']} at {c['runner_up_us']:.1f} us" if c.get("runner_up")
              else "no runner-up ran correctly")
    default = c.get("default", "")
    kept = " (the stages.toml configuration)" if c.get("chosen") == default else f" (stages.toml: {default})"
    reused = f"; choice reused from {c['reused']}" if c.get("reused") else ""
    return (f"{c['stage']}: configuration {c['chosen']}{kept} at {c['chosen_us']:.1f} us median, {runner}, "
            f"of {c.get('candidates', '?')} candidates timed at this shape{reused}")


def reuse_marks(folder: Path) -> ReuseMarks | None:
    """The marks of the run in ``folder``; None without a readable reuse.json (a recorded
    capture, or a run made before the cache)."""
    try:
        doc = json.loads((folder / REUSE_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    reused = [(str(r.get("what", "")), str(r.get("stage", "")), str(r.get("date_utc", "")), str(r.get("commit", "")))
              for r in doc.get("reused", []) if isinstance(r, dict)]
    return ReuseMarks(reused, [str(t) for t in doc.get("retimed", [])],
                      [_choice_line(c) for c in doc.get("choices", []) if isinstance(c, dict)],
                      [str(n) for n in doc.get("notes", [])], bool(doc.get("fresh")), str(doc.get("cache", "")))
