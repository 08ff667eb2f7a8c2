"""Rendering, end to end: one loaded run (or a counter-less run folder) -> one page -> the files.

Every ``render`` path goes through :func:`render_run`: a live run, a recorded capture, a
counter-less run and ``render --baseline`` differ only in the :class:`PageInputs` they give the
one page builder (:func:`~profiler_report.report.page.build_page`). Each capture is read once
(:func:`~profiler_report.analysis.run.load_run`); charts are drawn in forked workers while the
page is built.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiler_report.analysis.compare import comparison_rows, diff_summaries, require_comparable
from profiler_report.analysis.counterless import counters_note, timings_analysis, timings_summary, unavailable_reason
from profiler_report.analysis.experiments import experiment_tables
from profiler_report.analysis.run import Run, load_run, refuse_mixed
from profiler_report.analysis.sanitizer import sanitizer_text
from profiler_report.analysis.story import tell
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.experiment import ExperimentTable
from profiler_report.model.registry import DEFAULT_CASE, get_case
from profiler_report.report.bank_map import bank_map_jobs
from profiler_report.report.cells import cell_rules
from profiler_report.report.chart_pool import ChartPool
from profiler_report.report.charts import ChartJob, capture_chart_jobs, sidecar_chart_jobs
from profiler_report.report.guard import refuse_live_overwrite
from profiler_report.report.html import compile_templates, write_outputs
from profiler_report.report.notes import capture_provenance, page_notes
from profiler_report.report.page import PageInputs, build_page
from profiler_report.report.reuse_marks import reuse_marks
from profiler_report.util.timer import StepTimer

if TYPE_CHECKING:
    from profiler_report.analysis import Analysis
    from profiler_report.capture.readahead import PendingRead


def _wrong(validation: list[dict[str, Any]] | None) -> frozenset[str]:
    return cell_rules(validation).wrong


def _provenance(run: Run, live: bool, capture_label: str | None) -> dict[str, Any]:
    prov = capture_provenance(run.capture, run.sidecars, live)
    prov.update({k: f"mixed: {v}" for k, v in run.analysis.mixed.items()})  # a ladder of captures not comparable
    if capture_label:
        prov["capture"] = capture_label
    return prov


def _inputs(run: Run, live: bool, capture_label: str | None, experiment_reads: Mapping[Path, PendingRead] | None = None,
            prov: dict[str, Any] | None = None) -> PageInputs:
    """The page's inputs from ``run``; ``prov``: its :func:`_provenance`, when made already."""
    prov = prov if prov is not None else _provenance(run, live, capture_label)
    side = run.sidecars
    story = tell(run.analysis, run.case, capture=run.capture, side=side, dtype=str(prov.get("dtype", "float32")),
                 experiments=_experiments(run, experiment_reads))
    return PageInputs(run.analysis, prov, story, run.case, run.capture, side.timings, side.validation, side.bench,
                      side.sweep, notes=[*page_notes(prov, run.capture),
                                         *(run.analysis.coverage.notes() if run.analysis.coverage else []),
                                         *_mixed_note(run.analysis.mixed)],
                      sanitizer=side.sanitizer, reuse=reuse_marks(Path(run.path).parent))


def _experiments(run: Run, reads: Mapping[Path, PendingRead] | None) -> Iterator[ExperimentTable]:
    """The case's experiment tables, read when first asked for: :func:`tell` asks once the stage
    stories are told, and their captures' reads (started beside the main one's) finish meanwhile."""
    yield from experiment_tables(run.case, Path(run.path).parent, reads)


def _mixed_note(mixed: dict[str, str]) -> list[str]:
    if not mixed:
        return []
    return ["The captures of this ladder are not comparable (" + "; ".join(f"{k}: {v}" for k, v in mixed.items())
            + "): they are shown side by side, and no ratio is taken between two captures."]


def _analysis_jobs(analysis: Analysis, side: Sidecars, case: Case | None, prov: dict[str, Any],
                   counters: str = "") -> dict[str, ChartJob]:
    """The charts drawn from the analysis: the case's bank maps (with counters only), the
    bandwidth overview, the roofline and the stalls per stage. The bank maps, the slowest
    (0.07-0.13 s), go first: the workers then end close together."""
    return {**(bank_map_jobs(case, analysis.summary, str(prov.get("dtype", "float32"))) if not counters else {}),
            **capture_chart_jobs(analysis, side.timings, _wrong(side.validation))}


def _write(inp: PageInputs, out: Path, charts: Callable[[], Mapping[str, Any]], timer: StepTimer) -> list[Path]:
    """Build the page (``charts``: the pool's results, waited for there) and write it."""
    with timer.step("page"):
        page = build_page(inp, charts=charts)
    with timer.step("write"):
        return write_outputs(out, page, inp.analysis, inp.sanitizer)


@dataclass(frozen=True)
class RenderOptions:
    """How :func:`render_capture` renders (every field is one of its keyword arguments).

    ``labels``/``ceilings``/``expect``: ``--stage``, ``--ceiling`` and ``--expect`` (see
    :func:`~profiler_report.analysis.run.load_run`). ``live``: a live run's report (never refused).
    ``capture_label``: the path the report names for the capture (a live run renders inside its
    ``.partial`` folder, then renames it). ``baseline``: an earlier capture, compared per stage
    (:func:`~profiler_report.analysis.compare.diff_summaries`, flagged beyond ``tolerance``, a
    fraction); ``strict``: refuse a baseline that is not comparable. ``pending``: the read of the
    capture already started (:func:`profiler_report.capture.readahead.start_read`). ``timer``
    records read, analyze, page (including the wait for the charts) and write. ``chart_workers`` > 1
    draws the charts in that many forked processes. ``case``: the case that made both captures
    (None finds it from the capture, see :func:`~profiler_report.analysis.stages.own_case`).
    ``force``: write over a live run's report. ``run``: the capture already loaded, not read again.
    ``experiment_reads``: the reads of the case's experiment captures already started
    (:func:`~profiler_report.analysis.experiments.start_experiment_reads`). ``allow_mixed``: False
    refuses a ladder of captures that are not comparable
    (:func:`~profiler_report.analysis.run.refuse_mixed`), before any file is written.
    """

    labels: list[tuple[str, str]] | None = None
    live: bool = False
    capture_label: str | None = None
    baseline: Path | None = None
    tolerance: float = 0.05
    strict: bool = False
    pending: PendingRead | list[PendingRead | None] | None = None
    timer: StepTimer | None = None
    chart_workers: int = 1
    case: Case | None = None
    ceilings: list[tuple[str, str]] | None = None
    expect: Path | None = None
    force: bool = False
    run: Run | None = None
    experiment_reads: Mapping[Path, PendingRead] | None = None
    allow_mixed: bool = True


def prepare() -> None:
    """Import what a render needs (pandas, matplotlib on Agg, the analysis) and compile the page's
    templates, ahead of the render (about 1 s): a live run does it while ncu profiles, when the
    process only waits."""
    from profiler_report.report.charts import pyplot

    pyplot()
    compile_templates()


def render_capture(capture_path: Path | list[Path], out: Path,
                   **options: Any) -> tuple[Analysis, list[Path], list[str]]:
    """Read, analyze and render one capture (a list: one ladder) into ``out`` (index.html,
    summary.csv, summary.json); ``options`` are :class:`RenderOptions`' fields. A recorded page
    (not ``live``) is not written over a live run's report unless ``force``
    (:func:`refuse_live_overwrite`).

    Returns:
        (the analysis, the files written, what makes the two runs not comparable: [] without a
        baseline).

    Raises:
        InputError: ``out`` holds a live run's report (checked first, unless ``live`` or ``force``);
            a sidecar file is corrupt; a ``--stage`` pattern is bad or matches nothing; ``strict``
            and the baseline is not comparable; a ladder not comparable and not ``allow_mixed``.
        ReportUnreadableError: a capture cannot be read.
        TypeError: an option that is no field of :class:`RenderOptions`.
    """
    o = RenderOptions(**options)
    if not o.live and not o.force:
        refuse_live_overwrite(out)
    timer = o.timer or StepTimer(progress=False)
    run = o.run
    with ChartPool(o.chart_workers) as pool:  # forked now: the workers start while ncu_report reads
        many = isinstance(capture_path, list | tuple) and len(capture_path) > 1
        if run is not None:
            side = run.sidecars
        else:
            side = Sidecars() if many else read_sidecars(Path(_first(capture_path)).parent)
        early = pool.draw_lazily(sidecar_chart_jobs(side.bench, side.sweep))  # need no capture: drawn during the read
        if run is None:
            compile_templates()  # meanwhile too: not while the page is written (~0.06 s)
            with timer.step("read"):
                run = load_run(capture_path, o.labels, pending=o.pending, sidecars=side, case=o.case,
                               ceilings=o.ceilings, expect=o.expect)
        refuse_mixed(run, o.allow_mixed)
        prov = _provenance(run, o.live, o.capture_label)
        # Drawn while the story is told and the page built: they need the analysis alone.
        late = pool.draw_lazily(_analysis_jobs(run.analysis, run.sidecars, run.case, prov))
        inp, diffs = _inputs(run, o.live, o.capture_label, o.experiment_reads, prov), []
        if o.baseline is not None:
            with timer.step("baseline"):
                diffs = _compare(inp, run, o)
        files = _write(inp, out, lambda: early() | late(), timer)
    return run.analysis, files, diffs


def _compare(inp: PageInputs, run: Run, o: RenderOptions) -> list[str]:
    """The baseline's per-stage comparison into ``inp``; what makes the two runs not comparable."""
    assert o.baseline is not None
    old = load_run(o.baseline, o.labels, case=o.case, ceilings=o.ceilings, expect=o.expect)
    diffs = require_comparable(old, run, o.strict)
    inp.comparison = comparison_rows(diff_summaries(old.summary, run.summary, o.tolerance))
    inp.comparison_note = (f"Baseline: {o.baseline}. Flagged: a count or ratio changed by more than "
                           f"{o.tolerance:.0%}, or event timings moved beyond their p10..p90 spread."
                           + (f" Not comparable: {'; '.join(diffs)}." if diffs else ""))
    return diffs


def _first(path: Path | list[Path]) -> Path:
    return path[0] if isinstance(path, list | tuple) else path


def counterless_inputs(folder: Path, side: Sidecars, live: bool = True, case: Case | None = None) -> PageInputs:
    """The :class:`PageInputs` of a run without counters, from its sidecar files.

    Raises:
        InputError: the folder holds neither validation.json nor timings.json.
    """
    if not side.validation and not side.timings:
        raise InputError(f"{folder} holds neither validation.json nor timings.json",
                         "run `profiler-report run --no-counters` to make them")
    prov: dict[str, Any] = dict(side.provenance or {})
    case = case or get_case(str(prov.get("case_dir") or prov.get("case", DEFAULT_CASE)))
    reason = unavailable_reason(prov)
    summary = timings_summary(case, side.validation or [], side.timings or [], prov)
    analysis = timings_analysis(summary, case.manifest, f"unavailable ({reason})")
    prov.setdefault("sanitizer", sanitizer_text(side.sanitizer))
    prov.update(mode="live run" if live else "recorded capture", capture="none: no profiler ran",
                rendered_utc=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
                mode_note=(f"No performance counters ({reason}): every stage was validated and event-timed; "
                           "counter columns are marked unavailable."))
    story = tell(analysis, case, side=side, counters=reason, dtype=str(prov.get("dtype", "float32")))
    note = counters_note(reason)
    return PageInputs(analysis, prov, story, case, None, side.timings, side.validation, side.bench, side.sweep,
                      counters=reason, notes=[note, *page_notes(prov)], sanitizer=side.sanitizer, notices=[note],
                      reuse=reuse_marks(folder))


def render_timings_only(folder: Path, out: Path | None = None, live: bool = True,
                        case: Case | None = None) -> tuple[Analysis, list[Path]]:
    """The report of a run without counters (``run --no-counters``): ``folder``'s validation.json,
    timings.json and provenance.json rendered into ``out`` (default: ``folder``).

    Raises:
        InputError: the folder holds neither validation.json nor timings.json, or one is corrupt.
    """
    side = read_sidecars(folder)
    inp = counterless_inputs(folder, side, live, case)
    with ChartPool(1) as pool:
        early = pool.draw_lazily(sidecar_chart_jobs(inp.bench, inp.sweep))
        late = pool.draw_lazily(_analysis_jobs(inp.analysis, side, inp.case, inp.provenance, inp.counters))
        files = _write(inp, out or folder, lambda: early() | late(), StepTimer(progress=False))
    return inp.analysis, files
