"""Every summary and metric cell of the page, decided in one place.

A :class:`Cell` has a state and the text the page shows; :func:`cell` decides both from a
stage's summary row and the :class:`CellRules` of the page (which stages failed validation,
whether counters were collected). Templates only print cells.

States: "measured"; "not collected" (the capture does not hold the metric, or NaN); "not
applicable" (a per-instruction shared-memory ratio of a kernel without such instructions);
"unavailable" (counters were not collected in this run, with the reason); "not claimed" (a
speed of a stage that failed validation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from profiler_report.metrics import COLUMNS_BY_NAME, HEADLINE_BY_NAME
from profiler_report.util.fmt import column_decimals, fmt

if TYPE_CHECKING:
    import pandas as pd

    from profiler_report.analysis import Analysis

#: Columns that state a speed: a stage that failed validation claims none.
SPEED_PREFIXES = ("event_", "pct_of_", "duration", "dram_throughput")
#: Per-instruction shared-memory ratios and the instruction count that makes them applicable.
NEEDS_SHARED = {"shared_wavefronts_per_load": "shared_load_instructions",
                "shared_wavefronts_per_store": "shared_store_instructions"}


@dataclass(frozen=True)
class Cell:
    """One figure of the page: ``state`` (see the module docstring), ``text`` as shown, the
    base-unit ``value`` (None when there is none) and ``why`` (for unavailable and not collected)."""

    state: str
    text: str
    value: float | None = None
    why: str = ""

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class CellRules:
    """What decides the state of a page's cells beyond the numbers: the stages that failed
    validation, ``counters`` ("" when collected, else the reason, e.g. "permission"), and the
    decimals each column's figures share (:func:`column_formats`), so that one quantity reads the
    same in the summary and in a stage's section."""

    wrong: frozenset[str] = field(default_factory=frozenset)
    counters: str = ""
    decimals: dict[str, int | None] = field(default_factory=dict, hash=False, compare=False)


def column_formats(summary: pd.DataFrame) -> dict[str, int | None]:
    """Per summary column (every row: stages and ceilings), the decimals its figures share
    (:func:`~profiler_report.util.fmt.column_decimals` with the column's unit)."""
    out = {}
    for name in summary.columns:
        col = COLUMNS_BY_NAME.get(name)
        if col is not None and summary[name].dtype.kind in "fiu":
            out[name] = column_decimals(summary[name], col.unit)
    return out


def cell_rules(validation: list[dict[str, Any]] | None, counters: str = "",
               summary: pd.DataFrame | None = None) -> CellRules:
    """The :class:`CellRules` of a run: the stages its validation.json entries mark incorrect,
    and the decimals of ``summary``'s columns."""
    return CellRules(frozenset(v["stage"] for v in validation or [] if not v.get("correct", True)), counters,
                     column_formats(summary) if summary is not None else {})


def cell(row: Any, column: str, rules: CellRules) -> Cell:
    """The cell of ``column`` for one stage's summary row (a pandas Series or a mapping)."""
    stage = str(row.get("stage", ""))
    if stage in rules.wrong and column.startswith(SPEED_PREFIXES):
        return Cell("not claimed", "not claimed (incorrect)", why="the stage failed validation")
    if rules.counters and column in HEADLINE_BY_NAME:
        return Cell("unavailable", f"unavailable ({rules.counters})", why="counters were not collected in this run")
    value = row.get(column, math.nan)
    if column in NEEDS_SHARED and row.get(NEEDS_SHARED[column]) == 0:
        return Cell("not applicable", "n/a", why="the kernel issues no shared-memory instruction of this kind")
    if column == "shared_excessive_wavefronts" and str(row.get("shared_excessive_source")) == "not collected":
        return Cell("not collected", "not collected", why="neither the derived metric nor its inputs were collected")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell("not collected", "not measured", why="the capture does not hold this metric")
    col = COLUMNS_BY_NAME.get(column)
    return Cell("measured", fmt(value, col.unit if col else "", rules.decimals.get(column)), float(value))


def summary_cells(analysis: Analysis, rules: CellRules,
                  columns: tuple[str, ...]) -> tuple[list[str], list[dict[str, Any]]]:
    """The summary table: (the ``columns`` (the case's ``summary_columns``) the summary holds, one row per stage with
    ``stage``, ``role``, ``cells`` (a :class:`Cell` per column) and ``verdict``: the speed clause
    of the stage's verdict, or why no speed is claimed)."""
    summary = analysis.summary
    rules = rules if rules.decimals else replace(rules, decimals=column_formats(summary))
    cols = [c for c in columns if c in summary]
    rows = []
    for _, r in summary.iterrows():
        default = "ceiling reference" if r["role"] == "ceiling" else ""
        # The table keeps the speed clause; the stage's section gives the whole verdict.
        verdict = analysis.verdicts.get(r["stage"], default).split(";")[0].rstrip(".")
        if r["stage"] in rules.wrong:
            verdict = "incorrect: validation failed, no speed is claimed"
        rows.append({"stage": r["stage"], "role": r["role"], "cells": [cell(r, c, rules) for c in cols],
                     "verdict": verdict})
    return cols, rows
