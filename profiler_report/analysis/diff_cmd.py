"""The ``diff`` command's work, once OLD and NEW are known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from profiler_report.analysis.cli_args import ladder, names, warn_not_comparable


def run_diff(old: Path | list[Path], new: Path | list[Path], tolerance: float, fmt: str, fail_on: str,
             strict: bool, opts: dict[str, Any]) -> int:
    """Print the diff of ``old`` and ``new`` (``opts``: show_all and the ladder options); the exit
    code: 1 when ``fail_on`` is "regression" and a gated metric got worse, else 0.

    Raises:
        InputError (not comparable with ``strict``, mixed ladders, unreadable captures).
    """
    from profiler_report.analysis.compare import diff_summaries, regressions, require_comparable
    from profiler_report.analysis.diff_output import DIFF, DiffOutcome
    from profiler_report.analysis.run import load_run, refuse_mixed

    show_all = opts.pop("show_all")
    allow_mixed = opts.pop("allow_mixed")
    kw = ladder(**opts)
    a, b = load_run(old, **kw), load_run(new, **kw)
    refuse_mixed(a, allow_mixed)
    refuse_mixed(b, allow_mixed)
    diffs = require_comparable(a, b, strict)
    warn_not_comparable(old, new, diffs)
    frame = diff_summaries(a.summary, b.summary, tolerance)
    click.echo(DIFF[fmt].write(DiffOutcome(frame, names(old), names(new), tolerance, diffs, show_all)), nl=False)
    return 1 if fail_on == "regression" and len(regressions(frame)) else 0
