"""Rendering, end to end: one loaded run (or a counter-less run folder) -> one page -> the files.

Every ``render`` path goes through :func:`render_run`: a live run, a recorded capture, a
counter-less run and ``render --baseline`` differ only in the :class:`PageInputs` they give the
one page builder (:func:`~profiler_report.report.page.build_page`). Each capture is read once
(:func:`~profiler_report.analysis.run.load_run`); charts are drawn in forked workers while the
page is built.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiler_report.analysis.compare import comparison_rows, diff_summaries, require_comparable
from profiler_report.analysis.counterless import counters_note, timings_analysis, timings_summary, unavailable_reason
from profiler_report.analysis.experiments import experiment_tables
from profiler_report.analysis.run import Run, load_run
from profiler_report.analysis.sanitizer import sanitizer_text
from profiler_report.analysis.story import tell
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.registry import get_case
from profiler_report.report.bank_map import bank_map_jobs
from profiler_report.report.cells import cell_rules
from profiler_report.report.chart_pool import ChartPool
from profiler_report.report.charts import capture_chart_jobs, sidecar_chart_jobs
from profiler_report.report.guard import refuse_live_overwrite
from profiler_report.report.html import write_outputs
from profiler_report.report.notes import capture_provenance, page_notes
from profiler_report.report.page import PageInputs, build_page
from profiler_report.util.timer import StepTimer

if TYPE_CHECKING:
    from profiler_report.analysis import Analysis
    from profiler_report.capture.readahead import PendingRead


def _wrong(validation: list[dict[str, Any]] | None) -> frozenset[str]:
    return cell_rules(validation).wrong


def _inputs(run: Run, live: bool, capture_label: str | None) -> PageInputs:
    prov = capture_provenance(run.capture, run.sidecars, live)
    if capture_label:
        prov["capture"] = capture_label
    side = run.sidecars
    story = tell(run.analysis, run.case, capture=run.capture, side=side, dtype=str(prov.get("dtype", "float32")),
                 experiments=tuple(experiment_tables(run.case, Path(run.path).parent)))
    return PageInputs(run.analysis, prov, story, run.case, run.capture, side.timings, side.validation, side.bench,
                      side.sweep, notes=page_notes(prov, run.capture), sanitizer=side.sanitizer)


def _write(inp: PageInputs, out: Path, pool: ChartPool, early: Any, timer: StepTimer) -> list[Path]:
    late = pool.draw({**capture_chart_jobs(inp.analysis, inp.timings, _wrong(inp.validation)),
                      **(bank_map_jobs(inp.case, inp.analysis.summary, str(inp.provenance.get("dtype", "float32")))
                         if not inp.counters else {})})
    with timer.step("page"):
        page = build_page(inp, charts=lambda: {**early(), **late()})
    with timer.step("write"):
        return write_outputs(out, page, inp.analysis, inp.sanitizer)


def render_capture(capture_path: Path | list[Path], out: Path, *, labels: list[tuple[str, str]] | None = None,
                   live: bool = False, capture_label: str | None = None, baseline: Path | None = None,
                   tolerance: float = 0.05, strict: bool = False, pending: PendingRead | None = None,
                   timer: StepTimer | None = None, chart_workers: int = 1,
                   case: Case | None = None, ceilings: list[tuple[str, str]] | None = None,
                   expect: Path | None = None, force: bool = False,
                   run: Run | None = None) -> tuple[Analysis, list[Path], list[str]]:
    """Read, analyze and render one capture into ``out`` (index.html, summary.csv, summary.json).

    ``capture_label`` is the path the report names for the capture (a live run renders inside
    its ``.partial`` folder, then renames it). With ``baseline``, the page gets a per-stage
    comparison with that earlier capture (:func:`~profiler_report.analysis.compare.diff_summaries`,
    flagged beyond ``tolerance``). ``pending``: the read of ``capture_path`` already started
    (:func:`profiler_report.capture.readahead.start_read`). ``chart_workers`` > 1 draws the charts
    in that many forked processes. ``timer`` records read, analyze, page (including the wait for
    the charts) and write. ``case``: the case that made both captures (``--case DIR``; None finds
    it from the capture, see :func:`~profiler_report.analysis.stages.own_case`). A list of captures
    is one ladder; ``ceilings`` and ``expect`` are ``--ceiling`` and ``--expect`` (see
    :func:`~profiler_report.analysis.run.load_run`). A recorded page (not ``live``) is not written
    over a live run's report unless ``force`` (:func:`refuse_live_overwrite`). ``run``:
    ``capture_path`` already loaded (:func:`~profiler_report.analysis.run.load_run`), not read again.

    Returns:
        (the analysis, the files written, what makes the two runs not comparable: [] without a
        baseline).

    Raises:
        InputError: ``out`` holds a live run's report (checked first, unless ``live`` or ``force``);
            a sidecar file is corrupt; a ``--stage`` pattern is bad or matches nothing; ``strict``
            and the baseline is not comparable.
        ReportUnreadableError: a capture cannot be read.
    """
    if not live and not force:
        refuse_live_overwrite(out)
    timer = timer or StepTimer(progress=False)
    with ChartPool(chart_workers) as pool:  # forked now: the workers start while ncu_report reads
        many = isinstance(capture_path, list | tuple) and len(capture_path) > 1
        if run is not None:
            side = run.sidecars
        else:
            side = Sidecars() if many else read_sidecars(Path(_first(capture_path)).parent)
        early = pool.draw(sidecar_chart_jobs(side.bench, side.sweep))  # need no capture: drawn during the read
        if run is None:
            with timer.step("read"):
                run = load_run(capture_path, labels, pending=pending, sidecars=side, case=case, ceilings=ceilings,
                               expect=expect)
        inp, diffs = _inputs(run, live, capture_label), []
        if baseline is not None:
            with timer.step("baseline"):
                old = load_run(baseline, labels, case=case, ceilings=ceilings, expect=expect)
                diffs = require_comparable(old, run, strict)
            inp.comparison = comparison_rows(diff_summaries(old.summary, run.summary, tolerance))
            inp.comparison_note = (f"Baseline: {baseline}. Flagged: a count or ratio changed by more than "
                                   f"{tolerance:.0%}, or event timings moved beyond their p10..p90 spread."
                                   + (f" Not comparable: {'; '.join(diffs)}." if diffs else ""))
        files = _write(inp, out, pool, early, timer)
    return run.analysis, files, diffs


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
    case = case or get_case(str(prov.get("case_dir") or prov.get("case", "transpose")))
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
                      counters=reason, notes=[note, *page_notes(prov)], sanitizer=side.sanitizer, notices=[note])


def render_timings_only(folder: Path, out: Path | None = None, live: bool = True,
                        case: Case | None = None) -> tuple[Analysis, list[Path]]:
    """The report of a run without counters (``run --no-counters``): ``folder``'s validation.json,
    timings.json and provenance.json rendered into ``out`` (default: ``folder``).

    Raises:
        InputError: the folder holds neither validation.json nor timings.json, or one is corrupt.
    """
    inp = counterless_inputs(folder, read_sidecars(folder), live, case)
    with ChartPool(1) as pool:
        files = _write(inp, out or folder, pool, pool.draw(sidecar_chart_jobs(inp.bench, inp.sweep)),
                       StepTimer(progress=False))
    return inp.analysis, files
