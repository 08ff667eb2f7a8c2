"""The page model: small frozen dataclasses assembled once by :func:`build_page` from the
analysis, the story (:mod:`profiler_report.analysis.story`) and the drawn charts; templates only
lay them out. Nothing writes into a built page.

Page order: title, live/recorded banner, the headline sentence and the ladder table beside the
bandwidth chart (the first screen); the contents; one section per stage
(:mod:`~profiler_report.report.stage`); then the whole-run sections
(:mod:`~profiler_report.report.sections`), most of them folded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis
from profiler_report.analysis.embedded import embedded_sources
from profiler_report.analysis.ladder import Ladder
from profiler_report.analysis.sanitizer import sanitizer_text
from profiler_report.analysis.story import Story
from profiler_report.capture.model import Capture
from profiler_report.model.base import Case
from profiler_report.report import sections as sec
from profiler_report.report.cells import CellRules, cell, cell_rules
from profiler_report.report.charts import scope_ids, stall_axis_max
from profiler_report.report.roofline import roofline_section
from profiler_report.report.stage import Charts, StageInputs, StageSection, stage_section
from profiler_report.report.tables import where_notes


@dataclass(frozen=True)
class LadderLine:
    """One row of the ladder table as shown: the stage, its one change, its figure and % of the
    ceiling (cell text: :func:`~profiler_report.report.cells.cell`), the expected effect's counter
    before -> after and the verdict word."""

    stage: str
    change: str
    gbps: str
    pct: str
    counter: str
    decided_by: str
    verdict: str


@dataclass(frozen=True)
class LadderTable:
    """The first screen's table: its lines, the figure's name ("event-timed GB/s"), the %
    column's header ("" when there is no ceiling) and the ceiling's own line ("" when none)."""

    lines: tuple[LadderLine, ...]
    speed_label: str
    pct_label: str
    ceiling: str
    speed_column: str = "event_gbps"  # the summary columns of the figure and of its % ("" when none)
    pct_column: str = ""
    ceiling_name: str = ""  # the ceiling and its figure as a cell reads it ("" when none)
    ceiling_figure: str = ""
    ceiling_unit: str = "GB/s"  # the figure's unit: TFLOP/s for a case judged in it


@dataclass(frozen=True)
class Page:
    """One report page. ``mode`` is "live run" or "recorded capture"; ``sections`` follow the
    stages in page order (each with ``anchor``, ``title``, ``template``, ``folded``)."""

    title: str
    mode: str
    mode_note: str
    headline: str
    ladder: LadderTable
    overview_svg: str
    sanitizer_line: str
    stages: tuple[StageSection, ...]
    sections: tuple[Any, ...]
    notices: tuple[str, ...] = ()
    #: Metrics the capture lacks (metric, how to collect it): one folded line above the ladder.
    missing: tuple[tuple[str, str], ...] = ()
    #: A live run's reused results (:class:`~profiler_report.report.reuse_marks.ReuseMarks`); None: none recorded.
    reuse: Any = None

    def section(self, anchor: str) -> Any:
        """The whole-run section with ``anchor`` ("peers", "sweep", ...); None when the page has none."""
        return next((s for s in self.sections if s.anchor == anchor), None)

    @property
    def toc(self) -> list[tuple[str, str]]:
        """(anchor id, title) of every section, in page order: the browser test follows each link."""
        return [("ladder", "The ladder"), *((s.anchor, f"Stage {s.index}: {s.id}") for s in self.stages),
                *((s.anchor, s.title) for s in self.sections)]


@dataclass
class PageInputs:
    """Everything one page is built from. ``case`` is the case that made the capture (None for a
    capture made elsewhere); ``story`` is the judged story (:func:`~profiler_report.analysis.story.tell`);
    ``capture`` the capture itself (None without counters); ``comparison`` and
    ``comparison_note`` come from ``render --baseline``."""

    analysis: Analysis
    provenance: dict[str, Any]
    story: Story
    case: Case | None = None
    capture: Capture | None = None
    timings: list[dict[str, Any]] | None = None
    validation: list[dict[str, Any]] | None = None
    bench: list[dict[str, Any]] | None = None
    sweep: list[dict[str, Any]] | None = None
    counters: str = ""  # "" when collected, else why not ("permission", "--no-counters")
    notes: list[str] = field(default_factory=list)
    comparison: list[dict[str, Any]] = field(default_factory=list)
    comparison_note: str = ""
    sanitizer: dict[str, Any] | None = None  # sanitizer.json (live/sanitizer.py); None: not run
    notices: list[str] = field(default_factory=list)  # shown under the banner (counters unavailable)
    reuse: Any = None  # report.reuse_marks.ReuseMarks (reuse.json); None: none recorded


def ladder_table(lad: Ladder, summary: pd.DataFrame, rules: CellRules) -> LadderTable:
    """The ladder's rows as the page shows them: each figure is the summary cell of the ladder's
    speed column, so it reads the same as in the stage's metrics table."""
    rows = {str(r["stage"]): r for _, r in summary.iterrows()}
    sp = lad.speed
    lines = []
    for r in lad.rows:
        row = rows[r.stage]
        pct = str(cell(row, sp.pct_column, rules)) if sp.pct_column else ""
        lines.append(LadderLine(r.stage, r.change, str(cell(row, sp.column, rules)), pct, r.counter,
                                r.decided_by, r.verdict))
    figure = ""
    if sp.ceiling and sp.ceiling_gbps == sp.ceiling_gbps:
        figure = str(cell({"stage": sp.ceiling, sp.column: sp.ceiling_gbps}, sp.column, rules))
    return LadderTable(tuple(lines), sp.label, f"% of {sp.ceiling}" if sp.pct_column else "",
                       f"{sp.ceiling}: {figure} {sp.unit}" if figure else "", sp.column, sp.pct_column,
                       sp.ceiling if figure else "", figure, sp.unit)


def _stages(inp: PageInputs, rules: CellRules, drawn: Mapping[str, Any]) -> tuple[StageSection, ...]:
    a, case = inp.analysis, inp.case
    si = StageInputs(a, case, rules, {v["stage"]: v for v in inp.validation or []}, inp.sanitizer, inp.counters,
                     case.stage_sources() if case else {},
                     embedded_sources(inp.capture, a.summary) if case is None else {})
    stages = a.summary[a.summary["role"] == "stage"].reset_index(drop=True)
    words = {r.stage: r.verdict for r in inp.story.ladder.rows}
    stall_max = 0.0 if inp.counters else stall_axis_max(a.stalls)
    gaps = frozenset(a.breaks)  # no step spans a missing stage or two captures of a mixed ladder
    out = []
    for i, (_, row) in enumerate(stages.iterrows()):  # index reset: i is the row's label
        sid = str(row["stage"])
        charts = Charts("" if inp.counters else scope_ids(drawn.get(f"stalls:{sid}") or "", f"stalls-{i}-"),
                        stall_max, scope_ids(drawn.get(f"bankmap:{sid}") or "", f"bankmap-{i}-"))
        previous = stages.iloc[i - 1] if i and sid not in gaps else None
        out.append(stage_section(si, i + 1, previous, row, words.get(sid, ""),
                                 inp.story.stage(sid), charts, stage_parts(inp, sid, drawn)))
    return tuple(out)


def stage_parts(inp: PageInputs, sid: str, drawn: Mapping[str, Any]) -> tuple[Any, ...]:
    """The extra parts of stage ``sid``'s section, in order: one line per kind of part (each a
    frozen dataclass with ``anchor``, ``title`` and ``template``; None when the stage has none)."""
    parts: tuple[Any, ...] = ()
    return tuple(p for p in parts if p is not None)


def _timing_texts(table: LadderTable) -> dict[str, str]:
    """Each stage's (and the ceiling's) figure as the ladder shows it, for the peers table."""
    ceiling = {table.ceiling_name: table.ceiling_figure} if table.ceiling_name else {}
    return {**ceiling, **{line.stage: line.gbps for line in table.lines}}


def build_page(inp: PageInputs, charts: Callable[[], Mapping[str, Any]] | None = None) -> Page:
    """The whole page from :class:`PageInputs`, in one pass: every cell's state decided by
    :func:`~profiler_report.report.cells.cell`; ``charts`` (the pool's results: called once
    here, the charts may still be drawing in worker processes, each is waited for where it is
    placed) gives the SVGs by job key (:func:`~profiler_report.report.charts.capture_chart_jobs`).
    A new whole-run section is one line in the ``sections`` tuple below."""
    a, prov, story = inp.analysis, inp.provenance, inp.story
    rules = cell_rules(inp.validation, inp.counters, a.summary)
    table = ladder_table(story.ladder, a.summary, rules)
    drawn = charts() if charts is not None else {}
    sanitizer_line = sanitizer_text(inp.sanitizer, str(prov.get("sanitizer", "")))
    sections = (
        roofline_section(a.roofline, scope_ids(drawn.get("roofline") or "", "roofline-")),
        sec.comparison(inp.comparison, inp.comparison_note),
        sec.peers(inp.bench, story.peers_note, _timing_texts(table), scope_ids(drawn.get("peers") or "", "peers-"),
                  table.ceiling_unit),
        sec.sweep(story.sweep, story.sweep_verdicts, scope_ids(drawn.get("sweep") or "", "sweep-")),
        sec.shapes(story.shapes, story.shape_verdicts, scope_ids(drawn.get("shapes") or "", "shapes-")),
        *sec.experiments(story.experiments),
        sec.claims(story.claims),
        sec.Provenance(tuple(environment_rows(prov)), tuple([*inp.notes, *where_notes([*(inp.bench or []),
                                                                                      *(inp.sweep or [])])])),
        sec.validation(inp.validation, inp.case.dims if inp.case else ("rows", "cols"),
                       inp.case.validation_text if inp.case else ""),
        sec.sanitizer(inp.sanitizer, sanitizer_line),
        sec.sources(bool(inp.timings)),
    )
    return Page(
        title=f"Staged optimization report: {prov.get('gpu', 'unknown GPU')}",
        mode=prov.get("mode", "recorded capture"), mode_note=prov.get("mode_note", ""),
        headline=story.ladder.headline, ladder=table,
        overview_svg=scope_ids(drawn.get("bandwidth") or "", "overview-"), sanitizer_line=sanitizer_line,
        stages=_stages(inp, rules, drawn), sections=tuple(s for s in sections if s is not None),
        notices=tuple(inp.notices), missing=tuple(a.missing), reuse=inp.reuse,
    )


_ENV_KEYS = (
    ("mode", "mode"), ("gpu", "GPU"), ("sm_count", "SMs"), ("compute_capability", "compute capability"),
    ("driver", "driver"), ("cuda_runtime", "CUDA runtime"), ("cuda_driver_api", "CUDA driver API"),
    ("cupy", "CuPy"), ("ncu_version", "Nsight Compute"), ("section_set", "ncu --set"),
    ("clock_control", "clock control"), ("cache_control", "cache control"), ("sanitizer", "compute-sanitizer"),
    ("rows", "rows (timing)"), ("cols", "cols (timing)"), ("profile_rows", "rows (profiled)"),
    ("profile_cols", "cols (profiled)"), ("dtype", "dtype"), ("repeats", "timing repeats"),
    ("event_timing", "event timing"),
    ("date_utc", "date"), ("commit", "git commit"), ("capture", "capture file"), ("rendered_utc", "rendered"),
)


#: What a capture made elsewhere holds (report.notes.foreign_provenance), after the known keys.
_CAPTURE_KEYS = (
    ("sm_clock", "SM clock"), ("memory_clock", "memory clock"), ("l2_size", "L2 cache"), ("launches", "launches"),
    ("launch_shapes", "launch shapes"), ("read_with", "read with"),
)


def _env_keys(prov: dict[str, Any]) -> list[tuple[str, str]]:
    """:data:`_ENV_KEYS`, the transpose's rows and cols replaced by the case's own dimensions."""
    dims = prov.get("dims")
    if not isinstance(dims, list) or not dims or dims == ["rows", "cols"]:
        return list(_ENV_KEYS)
    keys = [k for k in _ENV_KEYS if k[0] not in ("rows", "cols", "profile_rows", "profile_cols")]
    at = [k[0] for k in keys].index("dtype")
    sizes = [(d, f"{d} (timing)") for d in dims] + [(f"profile_{d}", f"{d} (profiled)") for d in dims]
    return keys[:at] + sizes + keys[at:]


#: Characters of one provenance value the page shows (a value is a line of text).
ENV_VALUE_CHARS = 300


def _env_value(value: Any) -> str:
    """One provenance value as the environment block shows it: text or a number, cut to
    :data:`ENV_VALUE_CHARS`; null 'unknown (not recorded)'; anything else is named, not printed."""
    if value is None:
        return "unknown (not recorded)"
    if not isinstance(value, str | int | float):
        return f"not readable (a {type(value).__name__}, not text or a number)"
    text = str(value)
    return text if len(text) <= ENV_VALUE_CHARS else text[:ENV_VALUE_CHARS] + " ... (cut)"


def environment_rows(prov: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of the environment block. A run's provenance.json: every key, absent
    ones 'unknown (not recorded)'. A capture made elsewhere (``not_in_capture`` set): only what it
    holds, then one row for what it cannot say."""
    keys = _env_keys(prov)
    if not prov.get("not_in_capture"):
        return [(label, _env_value(prov.get(key))) for key, label in keys]
    rows = [(label, str(prov[key])) for key, label in (*keys, *_CAPTURE_KEYS)
            if key in prov and not str(prov[key]).startswith("unknown")]
    return [*rows, ("not in the capture", str(prov["not_in_capture"]))]
