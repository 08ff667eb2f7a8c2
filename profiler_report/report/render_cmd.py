"""The ``render`` command's work: read captures (in child processes, started first), render the
report, log where the time went."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from profiler_report.analysis.cli_args import ladder, one_or_many, warn_not_comparable

#: Most processes drawing charts for ``render``: a page has about a dozen, the slowest ~0.4 s.
CHART_WORKERS = 8


@dataclass(frozen=True)
class RenderTarget:
    """Where ``render`` writes (``out``), ``load_run``'s ladder arguments, and --allow-mixed."""

    out: Path
    ladder: dict[str, Any]
    allow_mixed: bool


def render_target(captures: tuple[Path, ...], out: Path | None, force: bool,
                  ladder_opts: dict[str, Any]) -> RenderTarget:
    """The ladder options checked and ``out`` (default: <first capture's folder>/rendered) found
    writable, before any read starts: a refusal costs nothing.

    Raises:
        InputError (bad ladder options; ``out`` holds a live run's report and not ``force``).
    """
    from profiler_report.report.guard import refuse_live_overwrite

    allow_mixed = ladder_opts.pop("allow_mixed")
    kw = ladder(**ladder_opts)
    out = out or captures[0].parent / "rendered"
    if not force:
        refuse_live_overwrite(out)
    return RenderTarget(out, kw, allow_mixed)


def render_captures(captures: tuple[Path, ...], target: RenderTarget, expect: Path | None, baseline: Path | None,
                    strict: bool, want: str, pending: list[Any]) -> None:
    """Render ``captures`` (``pending``: their reads, started) into ``target.out``; print each file
    written; close the reads still running.

    Raises:
        InputError (a stage of ``want`` missing: exit 5, after the page is written).
    """
    out = target.out
    try:
        analysis, files = _render_pending(one_or_many(captures), out, target.ladder, expect, baseline, strict,
                                          pending[0] if len(pending) == 1 else pending, target.allow_mixed)
    finally:
        for p in pending:
            if p is not None:
                p.close()
    for f in files:
        click.echo(f"wrote {f}")
    from profiler_report.analysis.coverage import require_stages

    require_stages(analysis.coverage, [s.strip() for s in want.split(",") if s.strip()] or None, str(out))


def _render_pending(capture: Path | list[Path], out: Path, ladder: dict[str, Any], expect: Path | None,
                    baseline: Path | None, strict: bool, pending: Any, allow_mixed: bool) -> tuple[Any, list[Path]]:
    """``render``'s work once the reads are started; logs where the time went."""
    from profiler_report.capture.readahead import usable_cpus
    from profiler_report.util.timer import StepTimer, log

    timer = StepTimer(progress=False)  # on failure the error line must stay alone
    with timer.step("import"):
        from profiler_report.report.build import render_capture
        from profiler_report.report.charts import pyplot

        pyplot()
        # The imports' objects live until exit: spare the collector walking them again, at exit
        # above all (~0.25 s on 2 CPUs), and the forked chart workers copying the pages it touches.
        gc.freeze()
    from profiler_report.analysis.run import load_run, refuse_mixed, reused_run

    workers = min(usable_cpus(), CHART_WORKERS)
    run, capture = reused_run(capture, ladder, timer)
    with timer.step("read"):
        run = run or load_run(capture, pending=pending, expect=expect, **ladder)
    refuse_mixed(run, allow_mixed)
    analysis, files, diffs = render_capture(capture, out, baseline=baseline, strict=strict, timer=timer,
                                            chart_workers=workers, expect=expect, force=True, run=run,
                                            **ladder)  # refuse_live_overwrite: checked before
    if baseline is not None:
        warn_not_comparable(baseline, capture, diffs)
    log(timer.table())
    return analysis, files
