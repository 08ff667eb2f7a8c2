"""One page builder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiler_report.analysis import Analysis, analyze
from profiler_report.capture.load import read_capture
from profiler_report.capture.model import Capture

if TYPE_CHECKING:
    from profiler_report.capture.readahead import PendingRead
    from profiler_report.util.timer import StepTimer

from profiler_report.analysis.compare import comparison_rows, diff_summaries, require_comparable
from profiler_report.analysis.run import load_run
from profiler_report.capture.readahead import PendingRead
from profiler_report.capture.sidecars import Sidecars, read_sidecars
from profiler_report.cases.manifest import Manifest, load_manifest
from profiler_report.report.annotate import annotate_stages
from profiler_report.report.chart_pool import ChartPool
from profiler_report.report.charts import capture_chart_jobs, fill_charts, sidecar_chart_jobs
from profiler_report.report.html import write_outputs
from profiler_report.report.notes import capture_provenance, page_notes
from profiler_report.report.page import Page, build_page
from profiler_report.util.timer import StepTimer


def render_with_baseline(capture_path: Path, out: Path, baseline_path: Path, *,
                         labels: list[tuple[str, str]] | None = None, tolerance: float = 0.05,
                         strict: bool = False, pending: PendingRead | None = None,
                         timer: StepTimer | None = None, chart_workers: int = 1) -> tuple[list[Path], list[str]]:
    """Render the report of ``capture_path`` into ``out`` with a comparison against a baseline.

    ``pending``, ``timer`` and ``chart_workers`` are as for :func:`profiler_report.report.render_capture`;
    reading and analyzing both runs for the comparison is the timer's step "compare".

    Returns:
        (files written, comparability differences).

    Raises:
        ReportUnreadableError: either capture cannot be read.
        InputError: a sidecar is corrupt; ``strict`` and the runs are not comparable.
    """
    from profiler_report.util.timer import StepTimer

    timer = timer or StepTimer(progress=False)
    with timer.step("compare"):
        new, old = load_run(capture_path, labels), load_run(baseline_path, labels)
        diffs = require_comparable(old, new, strict)

    def add_comparison(page: Any, analysis: Analysis) -> None:
        page.comparison = comparison_rows(diff_summaries(old.summary, analysis.summary, tolerance))
        page.comparison_note = (f"Baseline: {baseline_path}. Flagged: a count or ratio changed by more than "
                                f"{tolerance:.0%}, or event timings moved beyond their p10..p90 spread."
                                + (f" Not comparable: {'; '.join(diffs)}." if diffs else ""))

    _, files = render_capture(capture_path, out, labels=labels, page_hook=add_comparison, pending=pending,
                              timer=timer, chart_workers=chart_workers)
    return files, diffs


def own_manifest_for(capture: Capture, manifest: Manifest) -> Manifest | None:
    """The manifest when the capture was made by the project's own stage launcher (pr_ ranges)."""
    from profiler_report.live.target import NVTX_PREFIX

    ranges = capture.launches()["nvtx_range"].fillna("")
    return manifest if len(ranges) and ranges.str.contains(NVTX_PREFIX, regex=False).all() else None


def render_capture(capture_path: Path, out: Path, *, labels: list[tuple[str, str]] | None = None,
                   live: bool = False, manifest: Manifest | None = None,
                   sidecars: Sidecars | None = None, capture_label: str | None = None,
                   page_hook: Callable[[Page, Analysis], None] | None = None,
                   pending: PendingRead | None = None, timer: StepTimer | None = None,
                   chart_workers: int = 1) -> tuple[Analysis, list[Path]]:
    """Read, analyze and render one capture into ``out`` (index.html, summary.csv, summary.json).

    ``capture_label`` is the path the report names for the capture (a live run renders inside
    its ``.partial`` folder, then renames it). ``page_hook(page, analysis)`` may add to the page
    before it is written (``render --baseline`` adds its comparison). ``pending``: the read of
    ``capture_path`` already started (:func:`profiler_report.readahead.start_read`).
    ``chart_workers`` > 1 draws the charts in that many forked processes (see
    :class:`~profiler_report.render.ChartPool`), while the page is built here. ``timer`` records
    the steps read, analyze, page and charts (the wait for the charts once the page is built), write.

    Raises:
        InputError: a sidecar file is corrupt (checked first); a ``--stage`` pattern is bad or
            matches nothing.
        ReportUnreadableError: the capture cannot be read.
    """
    timer = timer or StepTimer(progress=False)
    with ChartPool(chart_workers) as pool:  # forked now: the workers start while ncu_report reads
        side = sidecars if sidecars is not None else read_sidecars(Path(capture_path).parent)
        early = pool.draw(sidecar_chart_jobs(side.bench, side.sweep))  # need no capture: drawn during the read
        with timer.step("read"):
            capture = read_capture(capture_path, pending=pending)
        with timer.step("analyze"):
            manifest = manifest or load_manifest()
            own = None if labels else own_manifest_for(capture, manifest)
            analysis = analyze(capture, own, labels, side.timings)
        late = pool.draw(capture_chart_jobs(analysis, side.timings))
        with timer.step("page"):
            page = _page(capture, analysis, side, own, live, capture_label, page_hook)
        with timer.step("charts"):
            fill_charts(page, {**early(), **late()})
    with timer.step("write"):
        files = write_outputs(out, page, analysis)
    return analysis, files


def _page(capture: Capture, analysis: Analysis, side: Sidecars, own: Manifest | None, live: bool,
          capture_label: str | None, page_hook: Callable[[Page, Analysis], None] | None) -> Page:
    """The page of :func:`render_capture`, without its charts."""
    prov = capture_provenance(capture, side, live)
    if capture_label:
        prov["capture"] = capture_label
    page = build_page(analysis, prov, own, side.timings, side.validation, charts=False, bench=side.bench,
                      sweep=side.sweep)
    page.notes.extend(page_notes(prov, capture))
    annotate_stages(page, analysis, capture, own, side.validation)
    if page_hook is not None:
        page_hook(page, analysis)
    return page


def render_timings_only(folder: Path, manifest: Manifest | None = None) -> tuple[Analysis, list[Path]]:
    """The report of a run without counters (``run --no-counters``), from ``folder``'s sidecar files.

    See :func:`profiler_report.degraded.render_timings_only`.

    Raises:
        InputError: the folder holds neither validation.json nor timings.json, or one is corrupt.
    """
    from profiler_report.report.counterless import render_timings_only as render

    return render(folder, manifest)
