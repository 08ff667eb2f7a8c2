"""The source articles' checks on the page: the case's experiments (the padding sweep), their
claims judged, 000's next limit per stage and the bank-map notes. Kept in one module (and one
template partial, ``_articles.html.j2``) so the rest of the page does not change for them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiler_report.analysis.claims import judge_claims
from profiler_report.analysis.next_step import next_steps
from profiler_report.capture.load import read_capture
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.experiment import ExperimentTable
from profiler_report.util.fmt import fmt
from profiler_report.util.jsonable import records

if TYPE_CHECKING:
    from profiler_report.report.page import Page, PageInputs


def experiment_tables(case: Case | None, folder: Path) -> list[ExperimentTable]:
    """Each of ``case``'s experiments from ``folder/<id>.ncu-rep`` and ``<id>.json`` (a live
    run's report folder, or the one a recorded capture sits in); an experiment without its
    capture is shown with its predictions alone.

    Raises:
        ReportUnreadableError: an experiment's capture is there but cannot be read.
        InputError: its ``<id>.json`` is not JSON.
    """
    tables = []
    for exp in case.experiments() if case else ():
        rep, side = folder / f"{exp.id}.ncu-rep", folder / f"{exp.id}.json"
        meta: dict[str, Any] = {}
        if side.is_file():
            try:
                meta = json.loads(side.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"cannot read {side}: {exc}", "delete it or rerun `profiler-report run`") from exc
        capture = read_capture(rep) if rep.is_file() else None
        table = exp.table(capture, meta.get("points") if isinstance(meta, dict) else None)
        if isinstance(meta, dict) and meta.get("error"):
            table.notes.append(f"The live run could not record this experiment: {meta['error']}")
        elif capture is not None and isinstance(meta, dict) and meta.get("date_utc"):
            table.notes.append(f"Its own capture ({rep.name}): recorded {meta['date_utc']} on {meta.get('gpu', '?')} "
                               f"at commit {meta.get('commit', '?')}, ncu {meta.get('ncu_version', '?')}, "
                               f"clock control {meta.get('clock_control', '?')}, "
                               # ncu's comma-joined metric list, spaced so the line wraps on a narrow page
                               f"{str(meta.get('ncu_options', '')).replace(',', ', ')}.")
        tables.append(table)
    return tables


def add_articles(page: Page, inp: PageInputs) -> None:
    """Fill the page's experiments and claims tables and each stage's next-limit line and
    bank-map note (the pictures themselves are chart jobs: :func:`bank_map_jobs`)."""
    a, case = inp.analysis, inp.case
    page.experiments = list(inp.experiments)
    points = {f"{t.id}/{p}": v for t in inp.experiments for p, v in t.values.items()}
    if case is not None and case.manifest.claims:
        page.claims = records(judge_claims(case.manifest.claims, a.summary, points))
    if inp.counters:
        return
    lines = next_steps(a.summary, a.stalls)
    rows = {str(r["stage"]): r for _, r in a.summary.iterrows()}
    maps = {m["stage"]: m for m in case.bank_maps(str(inp.provenance.get("dtype", "float32")))} if case else {}
    for section in page.stages:
        section.next_step = lines.get(section.id, "")
        if section.id in maps and section.id in rows:
            m, measured = maps[section.id], float(rows[section.id].get("shared_wavefronts_per_load", math.nan))
            section.bank_map_note = (f"Predicted from the tile layout: {m['wavefronts']} wavefront(s) per column-read "
                                     f"instruction (ideal {m['ideal']}). Measured for the whole launch: "
                                     f"{fmt(measured)} shared wavefronts per load instruction "
                                     "(l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / "
                                     "smsp__sass_inst_executed_op_shared_ld.sum).")


def bank_map_jobs(case: Case | None, summary: Any, dtype: str) -> dict[str, Any]:
    """Chart jobs (``bankmap:<stage>``) of the case's bank maps, each with the stage's measured
    shared wavefronts per load printed beside the prediction."""
    from profiler_report.report.charts import draw_bank_map

    if case is None:
        return {}
    rows = {str(r["stage"]): r for _, r in summary.iterrows()}
    jobs = {}
    for m in case.bank_maps(dtype):
        if m["stage"] in rows:
            measured = float(rows[m["stage"]].get("shared_wavefronts_per_load", math.nan))
            jobs[f"bankmap:{m['stage']}"] = (draw_bank_map, (m, measured))
    return jobs
