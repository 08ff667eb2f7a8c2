"""One stage's section of the page: what changed, the verdict with the counters that prove it,
then (folded) its source diff, where in the code, its charts and every metric.

:func:`stage_section` builds a frozen :class:`StageSection` from the analysis, the story and the
drawn charts in one go. A part added to every stage (a kernel list, a roofline point) is a small
frozen dataclass with ``anchor``, ``title`` and ``template`` (a ``templates/_part_*.html.j2``
partial) put into ``parts``; the stage template includes each part in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.analysis.ceilings import outruns_ceiling_note
from profiler_report.analysis.embedded import EmbeddedSource
from profiler_report.analysis.findings import rule_disagreement
from profiler_report.analysis.sanitizer import stage_text
from profiler_report.analysis.story import StageStory
from profiler_report.metrics import COLUMNS_BY_NAME
from profiler_report.model.base import Case
from profiler_report.report.annotate import conflict_context
from profiler_report.report.cells import CellRules, cell
from profiler_report.report.diff import code_diff_html
from profiler_report.report.stage_kernels import StageKernels, stage_kernels
from profiler_report.util.fmt import fmt_change
from profiler_report.util.jsonable import records

if TYPE_CHECKING:
    from profiler_report.analysis import Analysis

_COLUMNS = COLUMNS_BY_NAME  # headline, timing and stage columns (launches)


@dataclass(frozen=True)
class MetricRow:
    """One row of a stage's metrics table: the previous stage's and this stage's cell text, the
    relative change, the ncu source, and whether it moved by 5 % or more."""

    name: str
    label: str
    previous: str
    value: str
    change: str
    source: str
    moved: bool


@dataclass(frozen=True)
class Charts:
    """A stage's charts as SVG text ('' when not drawn): warp stalls (on the value axis
    ``stall_max`` shared by every stage) and the bank map."""

    stall_svg: str = ""
    stall_max: float = 0.0
    bank_map_svg: str = ""


@dataclass(frozen=True)
class StageSection:
    """Everything one stage's section shows, in page order; see the module docstring."""

    index: int
    id: str
    title: str
    kernel: str
    change: str
    notes: str
    word: str                 # the ladder's verdict word (analysis.ladder.VERDICTS)
    verdict: str              # the verdict sentence (analysis.verdicts.stage_verdict)
    proof: tuple[dict[str, Any], ...]  # the expected effects judged: text, metric, why, verdict
    correct: str
    launch: str
    sanitizer: str
    warnings: tuple[str, ...]
    code_html: str
    code_note: str
    story: StageStory
    metrics: tuple[MetricRow, ...]
    raw_conflicts: tuple[str, str]  # loads, stores
    conflict_context: str
    top_stalls: str
    rules_appear: tuple[dict[str, Any], ...]
    rules_vanish: tuple[dict[str, Any], ...]
    findings: tuple[dict[str, Any], ...]
    charts: Charts
    #: A stage of several launches: its kernels and their shares of its time (None: one launch).
    kernels: StageKernels | None = None
    parts: tuple[Any, ...] = ()

    @property
    def anchor(self) -> str:
        return f"stage-{self.id}"


def metric_rows(prev: pd.Series | None, row: pd.Series, rules: CellRules, case: Case | None) -> tuple[MetricRow, ...]:
    """The stage's metrics (the case's ``stage_metrics``; the base case's for a foreign capture)
    against the previous stage, every cell decided by :func:`~profiler_report.report.cells.cell`."""
    out = []
    for name in (case or Case).stage_metrics:
        if name not in row.index:
            continue
        cur, old = cell(row, name, rules), cell(prev, name, rules) if prev is not None else None
        change, moved = "", False
        if old is not None and cur.value is not None and old.value is not None:
            if old.value != 0:
                rel = (cur.value - old.value) / abs(old.value)
                change, moved = fmt_change(rel), abs(rel) >= 0.05
            elif cur.value != 0:
                change, moved = "from 0", True
            else:
                change = "="
        source = _COLUMNS[name].source
        if name == "shared_excessive_wavefronts" and row.get("shared_excessive_source") == "computed":
            source += " [computed: the derived metric was not in the capture]"
        out.append(MetricRow(name, _COLUMNS[name].label, str(old) if old is not None else "", str(cur), change,
                             source, moved))
    return tuple(out)


@dataclass(frozen=True)
class StageInputs:
    """What :func:`stage_section` reads besides the row: the run's analysis and case, the page's
    cell rules, validation entries by stage, sanitizer.json, counters ('' when collected) and the
    stage sources by id (from the case's kernel file; {} for a foreign capture) and, for a
    capture made elsewhere, the sources it embeds by stage
    (:func:`~profiler_report.analysis.embedded.embedded_sources`)."""

    analysis: Analysis
    case: Case | None
    rules: CellRules
    validation: dict[str, dict[str, Any]]
    sanitizer: dict[str, Any] | None
    counters: str
    sources: dict[str, str]
    embedded: dict[str, EmbeddedSource] = field(default_factory=dict)


def _correct_text(v: dict[str, Any] | None, case: Case | None) -> str:
    if v is None:
        return "not validated here (recorded capture)"
    return f"correct ({case.compare_text if case else 'validated'})" if v["correct"] else "WRONG: " + v["message"]


def _code(si: StageInputs, prev: pd.Series | None, sid: str) -> tuple[str, str]:
    cur = si.sources.get(sid)
    if cur is None:
        return _embedded_code(si, prev, sid)
    prev_id = str(prev["stage"]) if prev is not None else ""
    html = code_diff_html(si.sources.get(prev_id) if prev is not None else None, cur, prev_id, sid, si.case)
    return html, f"diff from {prev_id}" if prev is not None else "full source"


def _embedded_code(si: StageInputs, prev: pd.Series | None, sid: str) -> tuple[str, str]:
    """(highlighted code, note) of a stage of a capture made elsewhere: its kernel as the capture
    embeds it, as a diff from the previous stage's where both have source (the previous kernel's
    name made the current one's first, so the diff shows what changed in the body)."""
    cur = si.embedded.get(sid)
    if cur is None:
        return "", ("source not available: the capture embeds no source for this kernel (build it with -lineinfo "
                    "and profile with ncu --import-source yes)")
    where = f"the capture's source: {cur.name} from line {cur.first_line}"
    old = si.embedded.get(str(prev["stage"])) if prev is not None else None
    if prev is None or old is None:
        return code_diff_html(None, cur.text, "", sid), where
    kernel = str(si.analysis.summary.loc[si.analysis.summary["stage"] == sid, "kernel"].iloc[0])
    renamed = re.sub(rf"\b{re.escape(str(prev['kernel']))}\b", kernel, old.text)
    return (code_diff_html(renamed, cur.text, str(prev["stage"]), sid),
            f"diff from {prev['stage']}, {where}; {prev['stage']}: {old.name} from line {old.first_line}")


def _context(si: StageInputs, row: pd.Series, sid: str) -> tuple[str, tuple[str, ...]]:
    """The conflict figure's context and the case's warnings for this stage's launch."""
    if si.counters:
        return f"Launch shape: block {row['block']}, grid {row['grid']}; counters unavailable ({si.counters}).", ()
    tile, warnings = si.case.stage_notes(row, si.sources.get(sid)) if si.case else (
        "shared tile shape unknown (not in the capture)", [])
    return conflict_context(row, tile), tuple(warnings)


def _rules(a: Analysis, sid: str, row: pd.Series) -> tuple[tuple[dict[str, Any], ...], ...]:
    """ncu's rules that appear, vanish, and every finding of the stage, each with the note on a
    verdict it seems to contradict (``why_differs``)."""
    rc = a.rule_changes[a.rule_changes["stage"] == sid]
    findings = a.rules[(a.rules.get("stage") == sid) & a.rules["type"].isin(["warning", "optimization", "error"])] \
        if not a.rules.empty else a.rules
    found = records(findings[["rule", "title", "message", "speedup_pct"]]) if len(findings) else []

    def noted(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
        return tuple({**r, "why_differs": rule_disagreement(str(r["rule"]), str(r["title"]), row)} for r in rows)
    return (noted(records(rc[rc["change"] == "appears"])), tuple(records(rc[rc["change"] == "vanishes"])),
            noted(found))


def stage_section(si: StageInputs, index: int, prev: pd.Series | None, row: pd.Series, word: str,
                  story: StageStory, charts: Charts, parts: tuple[Any, ...] = ()) -> StageSection:
    """Stage ``index`` (1-based) of the page from its summary ``row`` (``prev``: the stage before
    it, None for the first), its ladder verdict ``word``, story, drawn charts and extra ``parts``
    (see the module docstring)."""
    a, sid = si.analysis, str(row["stage"])
    st = a.stage_info.get(sid) or (next((s for s in si.case.manifest.stages if s.id == sid), None) if si.case else None)
    code, code_note = _code(si, prev, sid)
    context, warnings = _context(si, row, sid)
    appear, vanish, findings = _rules(a, sid, row)
    verdict = a.verdicts.get(sid, "")
    valid = si.validation.get(sid)
    outrun = outruns_ceiling_note(row.get("pct_of_copy_kernel"), si.case.manifest.ceiling.id if si.case else "copy")
    if outrun and sid not in si.rules.wrong:
        warnings += (outrun,)
    if sid in si.rules.wrong:
        verdict = "Incorrect: this stage failed validation, so no speed is claimed for it."
        warnings += ("WRONG result: " + str((valid or {}).get("message", "validation failed")),)
    exp = a.expectations[a.expectations["stage"] == sid]
    return StageSection(
        index=index, id=sid, title=st.title if st else sid, kernel=str(row["kernel"]),
        change=st.change if st else "", notes=st.notes if st else "", word=word, verdict=verdict,
        proof=tuple(records(exp[["text", "metric", "why", "verdict"]])) if len(exp) else (),
        correct=_correct_text(valid, si.case), launch=f"grid {row['grid']}, block {row['block']}",
        sanitizer=stage_text(si.sanitizer, sid), warnings=warnings, code_html=code, code_note=code_note,
        story=story, metrics=metric_rows(prev, row, si.rules, si.case),
        raw_conflicts=(str(cell(row, "bank_conflicts_ld_raw", si.rules)),
                       str(cell(row, "bank_conflicts_st_raw", si.rules))),
        conflict_context=context, top_stalls=str(row.get("top_stalls", "") or ""),
        rules_appear=appear, rules_vanish=vanish, findings=findings, charts=charts, parts=parts,
        kernels=stage_kernels(a.kernels, sid))

