"""The ``render`` command's work: read captures (in child processes, started first), render the
report, log where the time went."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

#: Most processes drawing charts for ``render``: a page has about a dozen, the slowest ~0.4 s.
CHART_WORKERS = 8


@dataclass(frozen=True)
class RenderTarget:
    """Where ``render`` writes (``out``), the ladder options as given (``--stage``, ``--ceiling``,
    ``--case``: :func:`~profiler_report.analysis.cli_args.ladder`'s arguments) and --allow-mixed."""

    out: Path
    ladder_opts: dict[str, Any]
    allow_mixed: bool


def render_target(captures: tuple[Path, ...], out: Path | None, force: bool,
                  ladder_opts: dict[str, Any]) -> RenderTarget:
    """``out`` (default: <first capture's folder>/rendered) found writable, before any read
    starts: a refusal costs nothing. Light: the ladder options are checked by
    :func:`render_captures`, once the reads run (the check loads the analysis layer and pandas,
    ~0.3 s in which the reads would not have started).

    Raises:
        InputError (``out`` holds a live run's report and not ``force``).
    """
    from profiler_report.report.guard import refuse_live_overwrite

    allow_mixed = ladder_opts.pop("allow_mixed")
    out = out or captures[0].parent / "rendered"
    if not force:
        refuse_live_overwrite(out)
    return RenderTarget(out, ladder_opts, allow_mixed)


def render_captures(captures: tuple[Path, ...], target: RenderTarget, expect: Path | None, baseline: Path | None,
                    strict: bool, want: str, pending: list[Any]) -> None:
    """Render ``captures`` (``pending``: their reads, started) into ``target.out``; print each file
    written; close the reads still running.

    Raises:
        InputError (bad ladder options; a stage of ``want`` missing: exit 5, after the page is written).
    """
    started: dict[Path, Any] = {}  # the experiments' reads, started by _render_pending
    try:
        analysis, files = _render_pending(captures, target, expect, baseline, strict,
                                          pending[0] if len(pending) == 1 else pending, started)
    finally:
        for p in [*pending, *started.values()]:
            if p is not None:
                p.close()
    for f in files:
        click.echo(f"wrote {f}")
    from profiler_report.analysis.coverage import require_stages

    require_stages(analysis.coverage, [s.strip() for s in want.split(",") if s.strip()] or None, str(target.out))


def _render_pending(captures: tuple[Path, ...], target: RenderTarget, expect: Path | None, baseline: Path | None,
                    strict: bool, pending: Any, started: dict[Path, Any]) -> tuple[Any, list[Path]]:
    """``render``'s work once the captures' reads are started (``started``: the experiments'
    reads are added to it, for the caller to close); logs where the time went."""
    from profiler_report.capture.readahead import usable_cpus
    from profiler_report.util.timer import StepTimer, log

    timer = StepTimer(progress=False)  # on failure the error line must stay alone
    with timer.step("import"):
        from profiler_report.analysis.cli_args import ladder, one_or_many, warn_not_comparable  # pandas too

        kw = ladder(**target.ladder_opts)
        # The experiments' captures are read beside the main one's; a case (and so its experiments)
        # is looked for only without --stage and --expect (load_run).
        if not kw["labels"] and expect is None:
            from profiler_report.analysis.experiments import start_experiment_reads

            started.update(start_experiment_reads(captures[0].parent, kw["case"]))
        from profiler_report.report.build import render_capture
        from profiler_report.report.charts import pyplot

        pyplot()
        # The imports' objects live until exit: spare the collector walking them again, at exit
        # above all (~0.25 s on 2 CPUs), and the forked chart workers copying the pages it touches.
        gc.freeze()
    from profiler_report.analysis.run import reused_run

    workers = min(usable_cpus(), CHART_WORKERS)
    run, capture = reused_run(one_or_many(captures), kw, timer)
    # render_capture reads the capture itself (unless reused_run did): its chart workers, forked
    # first, draw the charts of the sidecar files while the reader children finish.
    analysis, files, diffs = render_capture(capture, target.out, baseline=baseline, strict=strict, timer=timer,
                                            chart_workers=workers, expect=expect, force=True, run=run,
                                            pending=pending, experiment_reads=started, allow_mixed=target.allow_mixed,
                                            **kw)  # refuse_live_overwrite: checked before
    if baseline is not None:
        warn_not_comparable(baseline, capture, diffs)
    log(timer.table())
    return analysis, files
