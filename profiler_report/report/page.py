"""The page model: plain dataclasses built once by :func:`build_page`; templates only lay them out."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer, DiffLexer

from profiler_report.analysis import Analysis
from profiler_report.analysis.findings import rule_disagreement
from profiler_report.analysis.sanitizer import sanitizer_text, stage_text
from profiler_report.capture.model import Capture
from profiler_report.metrics import COLUMNS_BY_NAME, HEADLINE, TIMING_COLUMNS
from profiler_report.model.base import Case
from profiler_report.report.annotate import add_stage_extras
from profiler_report.report.articles import add_articles
from profiler_report.report.cells import CellRules, cell, cell_rules, summary_cells
from profiler_report.report.charts import attach_charts, stall_axis_max
from profiler_report.report.headline import headline, peers_run_note, table_of_contents
from profiler_report.report.python_source import lexer as python_lexer
from profiler_report.report.python_source import python_code_lines
from profiler_report.report.stage_kernels import StageKernels, stage_kernels
from profiler_report.report.tables import (
    bench_rows,
    pct_label,
    shape_table,
    shape_verdicts,
    stage_label,
    sweep_table,
    sweep_verdicts,
    where_notes,
)
from profiler_report.util.fmt import fmt, fmt_change
from profiler_report.util.jsonable import records

#: Per-instruction shared-memory ratios: "n/a" (not "not measured") for a kernel without such accesses.
_NO_SHARED = {"shared_wavefronts_per_load": "shared_load_instructions",
              "shared_wavefronts_per_store": "shared_store_instructions"}


_COLUMNS = COLUMNS_BY_NAME  # headline, timing and stage columns (launches)


@dataclass
class MetricRow:
    name: str
    label: str
    previous: str
    value: str
    change: str
    source: str
    moved: bool


@dataclass
class StageSection:
    id: str
    title: str
    kernel: str
    change: str
    verdict: str
    correct: str
    launch: str
    code_html: str
    code_note: str
    metrics: list[MetricRow]
    expectations: list[dict[str, Any]]
    raw_conflicts: dict[str, str]
    top_stalls: str
    rules_appear: list[dict[str, Any]]
    rules_vanish: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    bandwidth_svg: str
    stall_svg: str
    # Filled by annotate.annotate_stages: block/tile shape and conflict side beside the figure,
    # warnings (metric traps), per-instruction attribution rows and how they were attributed.
    conflict_context: str = ""
    notes: list[str] = field(default_factory=list)
    attribution: list[dict[str, Any]] = field(default_factory=list)
    attribution_note: str = ""
    # The source articles' checks (report/articles.py): 000's next limit, the bank-map picture.
    next_step: str = ""
    bank_map_svg: str = ""
    bank_map_note: str = ""
    sanitizer: str = "not run"  # each compute-sanitizer tool's result (analysis.sanitizer.stage_text)
    kernels: StageKernels | None = None  # a stage of several launches: report/stage_kernels.py


@dataclass
class Page:
    title: str
    mode: str                 # "live run" or "recorded capture"
    mode_note: str
    environment: list[tuple[str, str]]
    summary_header: list[str]
    summary_rows: list[dict[str, Any]]
    overview_svg: str
    stages: list[StageSection]
    ceilings: list[dict[str, str]]
    missing: list[tuple[str, str]]
    validation: list[dict[str, Any]]
    sources: list[tuple[str, str]]
    validation_text: str = ""
    notes: list[str] = field(default_factory=list)
    peers_svg: str = ""
    peers_rows: list[dict[str, str]] = field(default_factory=list)
    peers_pct_label: str = "% of memcpy"
    sweep_svg: str = ""
    sweep_rows: list[dict[str, str]] = field(default_factory=list)
    sweep_verdicts: list[str] = field(default_factory=list)  # sweep_verdicts: where a peer still wins
    shapes_svg: str = ""
    shapes_rows: list[dict[str, Any]] = field(default_factory=list)  # shape_table records
    shapes_verdicts: list[str] = field(default_factory=list)  # shape_verdicts: fastest vs chosen
    comparison: list[dict[str, Any]] = field(default_factory=list)  # check.comparison_rows: render --baseline
    comparison_note: str = ""
    headline: str = ""        # headline.headline: the ladder in one sentence
    toc: list[tuple[str, str]] = field(default_factory=list)  # headline.table_of_contents: (anchor, title)
    peers_note: str = ""      # headline.peers_run_note: which run the peers' GB/s come from
    stall_axis_max: float = 0.0  # charts.stall_axis_max: the value axis every stall chart shares
    # The source articles' checks (report/articles.py): experiments, claims judged.
    experiments: list[Any] = field(default_factory=list)  # cases.experiment.ExperimentTable
    claims: list[dict[str, Any]] = field(default_factory=list)  # analysis.claims.CLAIM_COLUMNS records
    sanitizer_line: str = "not run"  # analysis.sanitizer.sanitizer_text
    sanitizer_rows: list[dict[str, Any]] = field(default_factory=list)  # sanitizer.json's stages
    sanitizer_tools: list[str] = field(default_factory=list)
    sanitizer_other: list[str] = field(default_factory=list)


_FORMATTER = HtmlFormatter(noclasses=True, nowrap=False, style="friendly")


def code_diff_html(previous: str | None, current: str, prev_id: str, cur_id: str, case: Case | None = None) -> str:
    """The stage's source as a highlighted unified diff from the previous stage (or in full);
    the case makes what differs by design (function names) equal first, and hunks that change
    only comments or blank lines are left out (:func:`code_diff`)."""
    python = case is not None and case.source_language == "python"  # report/python_source.py
    if previous is None:
        return highlight(current, python_lexer() if python else CudaLexer(), _FORMATTER)
    norm_prev = case.normalize_source(previous, prev_id) if case else previous
    norm_cur = case.normalize_source(current, cur_id) if case else current
    diff, hidden = code_diff(norm_prev, norm_cur, prev_id, cur_id, lines_of=python_code_lines if python else code_lines)
    if hidden:
        diff = (diff or "(no code change)") + (f"\n# {hidden} line{'s' if hidden > 1 else ''} that differ only in "
                                               "comments or blank lines not shown")
    return highlight(diff or "(no source change)", DiffLexer(), _FORMATTER)


_COMMENT = re.compile(r"//.*$")


def code_lines(text: str) -> list[str]:
    """Each line of CUDA source reduced to its code: comments (``//`` and ``/* */``, also across
    lines) removed, whitespace collapsed; a comment-only or blank line becomes ""."""
    out, in_block = [], False
    for line in text.splitlines():
        code = ""
        rest = line
        while rest:
            if in_block:
                end = rest.find("*/")
                if end < 0:
                    rest = ""
                    break
                rest, in_block = rest[end + 2:], False
            else:
                start = rest.find("/*")
                head = rest if start < 0 else rest[:start]
                code += _COMMENT.sub("", head) if "//" in head else head
                if start < 0 or "//" in head:
                    break
                rest, in_block = rest[start + 2:], True
        out.append(" ".join(code.split()))
    return out


def code_diff(previous: str, current: str, prev_id: str, cur_id: str, context: int = 3,
              lines_of: Callable[[str], list[str]] | None = None) -> tuple[str, int]:
    """A unified diff (``context`` lines) of two sources without the hunks whose changed lines all
    read the same as code (:func:`code_lines`: only comments or blank lines differ). Lines are
    matched on their code, so a line whose trailing comment changed is context. Returns (diff
    text, "" when no code changed; how many lines that differ only in comments were left out)."""
    a, b = previous.splitlines(), current.splitlines()
    lines_of = lines_of or code_lines  # CUDA by default; a Python stage's: python_code_lines
    ka, kb = lines_of(previous), lines_of(current)
    matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    every = list(matcher.get_opcodes())  # a copy: get_grouped_opcodes trims the cached list in place
    out, shown = [f"--- {prev_id}", f"+++ {cur_id}"], set()
    for group in matcher.get_grouped_opcodes(context):
        changed = [op for op in group if op[0] != "equal"]
        if all(not any(ka[i1:i2]) and not any(kb[j1:j2]) for _, i1, i2, j1, j2 in changed):
            continue
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        shown.update(range(j1, j2))
        out.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out += [" " + line for line in b[y1:y2]]
                continue
            out += ["-" + line for line in a[x1:x2]]
            out += ["+" + line for line in b[y1:y2]]
    hidden = 0  # lines left out that differ in their comments only
    for tag, x1, x2, y1, y2 in every:
        if tag == "equal":
            hidden += sum(a[x] != b[y] and y not in shown for x, y in zip(range(x1, x2), range(y1, y2), strict=True))
        elif not set(range(y1, y2)) & shown and not any(ka[x1:x2]) and not any(kb[y1:y2]):
            hidden += max(x2 - x1, y2 - y1)
    return ("\n".join(out) if len(out) > 2 else ""), hidden


def _metric_rows(prev: pd.Series | None, row: pd.Series, rules: CellRules, case: Case | None) -> list[MetricRow]:
    out = []
    for name in (case or Case).stage_metrics:  # no case (a foreign capture): the base's
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
    return out


_records = records  # NaN as None, as summary.json writes them


@dataclass
class PageInputs:
    """Everything one page is built from. ``case`` is the case that made the capture (None for a
    capture made elsewhere); ``capture`` gives the per-instruction attribution (None without
    counters); ``comparison`` and ``comparison_note`` come from ``render --baseline``."""

    analysis: Analysis
    provenance: dict[str, Any]
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
    #: The case's experiments as tables (report.articles.experiment_tables), in case order.
    experiments: list[Any] = field(default_factory=list)
    sanitizer: dict[str, Any] | None = None  # sanitizer.json (live/sanitizer.py); None: not run


def _correct_text(v: dict[str, Any] | None, case: Case | None) -> str:
    if v is None:
        return "not validated here (recorded capture)"
    return f"correct ({case.compare_text if case else 'validated'})" if v["correct"] else "WRONG: " + v["message"]


def _section(inp: PageInputs, rules: CellRules, prev: pd.Series | None, row: pd.Series,
             sources: dict[str, str]) -> StageSection:
    a, case, sid = inp.analysis, inp.case, row["stage"]
    st = a.stage_info.get(sid) or (next((s for s in case.manifest.stages if s.id == sid), None) if case else None)
    cur_src = sources.get(sid)
    if cur_src is not None:
        prev_src = sources.get(prev["stage"]) if prev is not None else None
        code = code_diff_html(prev_src if prev is not None else None, cur_src,
                              prev["stage"] if prev is not None else "", sid, case)
        note = f"diff from {prev['stage']}" if prev is not None else "full source"
    else:
        code, note = "", "source not available: this capture was not made from the project's kernels"
    exp = a.expectations[a.expectations["stage"] == sid]
    rc = a.rule_changes[a.rule_changes["stage"] == sid]
    findings = a.rules[(a.rules.get("stage") == sid) & a.rules["type"].isin(["warning", "optimization", "error"])] \
        if not a.rules.empty else a.rules
    valid = {v["stage"]: v for v in inp.validation or []}
    section = StageSection(
        id=sid, title=st.title if st else sid, kernel=row["kernel"], change=st.change if st else "",
        verdict=a.verdicts.get(sid, ""), correct=_correct_text(valid.get(sid), case),
        launch=f"grid {row['grid']}, block {row['block']}", code_html=code, code_note=note,
        metrics=_metric_rows(prev, row, rules, inp.case), expectations=_records(exp),
        raw_conflicts={"loads": str(cell(row, "bank_conflicts_ld_raw", rules)),
                       "stores": str(cell(row, "bank_conflicts_st_raw", rules))},
        top_stalls=row["top_stalls"],
        rules_appear=_records(rc[rc["change"] == "appears"]), rules_vanish=_records(rc[rc["change"] == "vanishes"]),
        findings=_records(findings[["rule", "title", "message", "speedup_pct"]]) if len(findings) else [],
        bandwidth_svg="", stall_svg="")
    add_stage_extras(section, row, inp, cur_src)
    for r in (*section.rules_appear, *section.findings):  # ncu's rule text beside a verdict it seems to contradict
        r["why_differs"] = rule_disagreement(str(r["rule"]), str(r["title"]), row)
    section.sanitizer = stage_text(inp.sanitizer, sid)
    section.kernels = stage_kernels(a.kernels, sid)
    if sid in rules.wrong:
        section.verdict = "Incorrect: this stage failed validation, so no speed is claimed for it."
        section.notes.append("WRONG result: " + str(valid[sid].get("message", "validation failed")))
    return section


def _summary_rows(inp: PageInputs, rules: CellRules) -> tuple[list[str], list[dict[str, Any]]]:
    cols, rows = summary_cells(inp.analysis, rules, (inp.case or Case).summary_columns)
    return ["stage", *[_COLUMNS[c].label for c in cols], "verdict"], rows


def build_page(inp: PageInputs, charts: Callable[[], dict[str, Any]] | None = None) -> Page:
    """The whole page, from :class:`PageInputs`: every cell's state decided by
    :func:`~profiler_report.report.cells.cell`; ``charts`` (called last: the charts may still be
    drawing in worker processes) gives the SVGs (:func:`~profiler_report.report.charts.chart_fields`)."""
    a, prov, case = inp.analysis, inp.provenance, inp.case
    rules = cell_rules(inp.validation, inp.counters, a.summary)
    stages = a.summary[a.summary["role"] == "stage"].reset_index(drop=True)
    sources = case.stage_sources() if case else {}
    sections = [_section(inp, rules, stages.iloc[i - 1] if i else None, row, sources) for i, row in stages.iterrows()]
    header, rows = _summary_rows(inp, rules)
    ceiling_id = case.manifest.ceiling.id if case else "copy"
    sweep_frame = sweep_table(inp.sweep) if inp.sweep else pd.DataFrame()
    shapes = shape_table(inp.sweep) if inp.sweep else pd.DataFrame()
    page = Page(
        title=f"Staged optimization report: {prov.get('gpu', 'unknown GPU')}",
        mode=prov.get("mode", "recorded capture"), mode_note=prov.get("mode_note", ""),
        environment=environment_rows(prov), summary_header=header, summary_rows=rows, overview_svg="",
        stages=sections,
        ceilings=[{"name": t["name"], "gbps": fmt(t["gbps"], "GB/s"), "median_us": fmt(t["median_us"], "us")}
                  for t in inp.timings or [] if t["name"] in ("memcpy", ceiling_id)],
        missing=a.missing, validation=_validation_rows(inp), validation_text=case.validation_text if case else "",
        sources=[(c.label, c.source) for c in (*HEADLINE, *(TIMING_COLUMNS if inp.timings else ()))],
        notes=[*inp.notes, *where_notes([*(inp.bench or []), *(inp.sweep or [])])],
        peers_rows=bench_rows(inp.bench or []), peers_pct_label=pct_label(inp.bench or []),
        sweep_rows=_records(sweep_frame.assign(stage_label=[stage_label(r) for _, r in sweep_frame.iterrows()]))
        if not sweep_frame.empty else [],
        sweep_verdicts=sweep_verdicts(sweep_frame) if not sweep_frame.empty else [],
        shapes_rows=_records(shapes) if not shapes.empty else [],
        shapes_verdicts=shape_verdicts(shapes) if not shapes.empty else [],
        comparison=inp.comparison, comparison_note=inp.comparison_note,
        headline=headline(a.summary, rules.wrong), peers_note=peers_run_note(a.summary, inp.bench or []),
        stall_axis_max=0.0 if inp.counters else stall_axis_max(a.stalls),
        sanitizer_line=sanitizer_text(inp.sanitizer, str(prov.get("sanitizer", ""))),
        sanitizer_rows=list((inp.sanitizer or {}).get("stages", [])),
        sanitizer_tools=[str(t.get("tool")) for t in (inp.sanitizer or {}).get("tools", [])],
        sanitizer_other=[str(o) for o in (inp.sanitizer or {}).get("other", [])],
    )
    add_articles(page, inp)
    page.toc = table_of_contents(page)
    if charts is not None:
        attach_charts(page, charts(), inp.counters)
    return page


def _validation_rows(inp: PageInputs) -> list[dict[str, Any]]:
    """validation.json entries with their size as the case writes it ('8192x8192')."""
    out = []
    for v in inp.validation or []:
        dims = inp.case.dims if inp.case else ("rows", "cols")
        size = "x".join(str(v[d]) for d in dims if d in v) or "?"
        out.append({**v, "size": size})
    return out


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
