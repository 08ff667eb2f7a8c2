"""The ladder at a glance: one row per stage (its one change, its speed against the case's own
ceiling, its expected effect's counter before -> after, one verdict word) and the headline
sentence. The first screen of the report is built from these and nothing else.

Every speed here is one figure per stage: the summary's ``event_gbps`` (the timing run,
timings.json) where the stages were event-timed, else Nsight Compute's DRAM throughput of the
profiled launch. The page, its charts and its headline take a stage's figure from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiler_report.metrics import COLUMNS_BY_NAME, TIMING_COLUMNS, ratio
from profiler_report.model.manifest import Stage
from profiler_report.util.fmt import column_decimals, fmt

#: Verdict words of the ladder table, worst first: a stage's word is the worst of its expected
#: effects' verdicts ("wrong": it failed validation; "baseline": the first stage).
VERDICTS = ("wrong", "refuted", "no effect", "confirmed")
#: The time columns an expected effect may name: judged, but not the counter the table shows.
_TIME_METRICS = {"duration_us", *(c.name for c in TIMING_COLUMNS)}
#: Words of a change the table shows when the manifest gives no ``short`` text.
SHORT_WORDS = 15


@dataclass(frozen=True)
class Speed:
    """Where the ladder's figures come from: ``column`` of the summary (``event_gbps`` or
    ``dram_throughput_gbps``), how the page names it, and the ceiling the % compares with:
    ``ceiling`` ("memcpy", the case's ceiling kernel id, or "" when there is none), its GB/s
    (NaN when not timed) and the summary column that holds each stage's % of it ("" when none)."""

    column: str
    label: str
    ceiling: str
    ceiling_gbps: float
    pct_column: str
    #: The figure's unit: "GB/s", or "TFLOP/s" for a case whose work unit it is (a matrix multiply).
    unit: str = "GB/s"


@dataclass(frozen=True)
class LadderRow:
    """One stage of the ladder table. ``gbps`` and ``pct`` are the stage's figures (NaN when not
    measured or not claimed); ``counter`` is 'label a -> b' of the first expected effect on a
    counter ('' when the stage expects none, or for the baseline); ``verdict`` one of
    :data:`VERDICTS`, "baseline" or "not judged" (no expected effect, or none measurable)."""

    stage: str
    title: str
    change: str
    gbps: float
    pct: float
    counter: str
    counter_verdict: str
    verdict: str
    #: What set ``verdict`` when it is not the counter's: 'time: no effect' ('' otherwise).
    decided_by: str = ""


@dataclass(frozen=True)
class Ladder:
    """The ladder table's rows (stages only, run order), its speed source and the headline."""

    rows: tuple[LadderRow, ...]
    speed: Speed
    headline: str

    def row(self, stage: str) -> LadderRow:
        """The row of ``stage``. Raises KeyError when it is none of the ladder's."""
        for r in self.rows:
            if r.stage == stage:
                return r
        raise KeyError(stage)


def short_change(stage: Stage | None) -> str:
    """The stage's change in at most ~15 words: its ``short`` text, else the first sentence of
    ``change`` cut at :data:`SHORT_WORDS` words ('' when neither is known)."""
    if stage is None:
        return ""
    if stage.short:
        return stage.short
    first = stage.change.split(". ")[0].rstrip(".")
    words = first.split()
    return " ".join(words[:SHORT_WORDS]) + (" ..." if len(words) > SHORT_WORDS else "")


#: Per speed unit: the summary's event-timed column and bench.json's key of the same figure.
SPEED_FIELDS = {"GB/s": ("event_gbps", "gbps"), "TFLOP/s": ("event_tflops", "tflops")}


def speed_source(summary: pd.DataFrame, ceiling_op: str | None, memcpy_gbps: float = math.nan,
                 work_unit: str = "GB/s") -> Speed:
    """The ladder's figure and ceiling. Event-timed GB/s when the stages were timed, against
    memcpy for a copy-shaped case (``ceiling_op`` "copy" or "transpose") and against the case's
    own ceiling kernel for any other (a reduction's read kernel); else ncu's DRAM throughput,
    against nothing (a profiled launch has no ceiling timed beside it). ``memcpy_gbps``: the
    timing run's memcpy (timings.json's entry "memcpy"). ``work_unit`` "TFLOP/s" (the case's
    :attr:`~profiler_report.model.base.Case.work_unit`): event-timed TFLOP/s against the case's
    ceiling (cuBLAS for a matrix multiply)."""
    stages = summary[summary["role"] == "stage"]
    ceilings = summary[summary["role"] == "ceiling"]
    if work_unit == "TFLOP/s" and "event_tflops" in stages and stages["event_tflops"].notna().any():
        if len(ceilings) and "pct_of_copy_kernel" in summary:
            own = ceilings.iloc[0]
            return Speed("event_tflops", "event-timed TFLOP/s", str(own["stage"]), float(own["event_tflops"]),
                         "pct_of_copy_kernel", "TFLOP/s")
        return Speed("event_tflops", "event-timed TFLOP/s", "", math.nan, "", "TFLOP/s")
    if "event_gbps" in stages and stages["event_gbps"].notna().any():
        if ceiling_op in (None, "copy", "transpose") and "pct_of_memcpy" in summary \
                and summary["pct_of_memcpy"].notna().any():
            return Speed("event_gbps", "event-timed GB/s", "memcpy", memcpy_gbps, "pct_of_memcpy")
        if len(ceilings) and "pct_of_copy_kernel" in summary:
            own = ceilings.iloc[0]
            return Speed("event_gbps", "event-timed GB/s", str(own["stage"]), float(own["event_gbps"]),
                         "pct_of_copy_kernel")
        return Speed("event_gbps", "event-timed GB/s", "", math.nan, "")
    return Speed("dram_throughput_gbps", "GB/s DRAM throughput (ncu)", "", math.nan, "")


def _counter(exp: pd.DataFrame) -> tuple[str, str]:
    """'label a -> b' and its verdict for the first expected effect on a counter (not a time)."""
    for _, e in exp.iterrows():
        if e["metric"] in _TIME_METRICS:
            continue
        col = COLUMNS_BY_NAME.get(str(e["metric"]))
        label = col.label.split(" (")[0] if col else str(e["metric"])
        unit = col.unit if col else ""
        old, new = float(e["old"]), float(e["new"])
        if math.isnan(old) or math.isnan(new):  # counters not collected: the verdict says why
            shown = e["verdict"] if str(e["verdict"]).startswith("unavailable") else "not measured"
            return f"{label}: {shown}", str(e["verdict"])
        d = column_decimals([old, new], unit)
        return f"{label} {fmt(old, unit, d)} -> {fmt(new, unit, d)}", str(e["verdict"])
    return "", ""


def _decided_by(exp: pd.DataFrame, verdict: str) -> str:
    """'time: no effect' or '<counter label>: refuted': the first expected effect whose verdict is the stage's."""
    for _, e in exp.iterrows():
        if e["verdict"] == verdict:
            col = COLUMNS_BY_NAME.get(str(e["metric"]))
            name = "time" if e["metric"] in _TIME_METRICS else col.label.split(" (")[0] if col else str(e["metric"])
            return f"{name}: {verdict}"
    return ""


def stage_word(verdicts: list[str]) -> str:
    """One word for a stage from its expected effects' verdicts: the worst of them
    (:data:`VERDICTS`), "not judged" when none is confirmed, refuted or without effect."""
    judged = [v for v in verdicts if v in VERDICTS]
    return min(judged, key=VERDICTS.index) if judged else "not judged"


def ladder(summary: pd.DataFrame, expectations: pd.DataFrame, stage_info: dict[str, Stage],
           ceiling_op: str | None, wrong: frozenset[str] = frozenset(),
           timings: list[dict[str, Any]] | None = None, gaps: frozenset[str] = frozenset(),
           work_unit: str = "GB/s") -> Ladder:
    """The ladder of one analysis: ``summary`` and ``expectations`` as
    :class:`~profiler_report.analysis.Analysis` holds them, the manifest entries by stage id,
    the case's ceiling ``op`` (None: a capture made elsewhere), the stages that failed validation
    and the timing run's entries (timings.json: memcpy's GB/s). ``gaps``: stages after a missing
    stage or another capture (:attr:`~profiler_report.analysis.Analysis.breaks`): no ratio spans them."""
    memcpy = next((float(t["gbps"]) for t in timings or [] if t.get("name") == "memcpy"), math.nan)
    speed = speed_source(summary, ceiling_op, memcpy, work_unit)
    stages = summary[summary["role"] == "stage"].reset_index(drop=True)
    rows = []
    for i, r in stages.iterrows():
        sid = str(r["stage"])
        exp = expectations[expectations["stage"] == sid]
        counter, counter_verdict = _counter(exp)
        bad = sid in wrong
        verdict = "wrong" if bad else "baseline" if i == 0 else stage_word(list(exp["verdict"]))
        decided = _decided_by(exp, verdict) if verdict != counter_verdict and verdict in VERDICTS[1:] else ""
        gbps = math.nan if bad else float(r.get(speed.column, math.nan))
        pct = math.nan if bad or not speed.pct_column else float(r.get(speed.pct_column, math.nan))
        info = stage_info.get(sid)
        rows.append(LadderRow(sid, info.title if info else sid, short_change(info), gbps, pct, counter,
                              counter_verdict, verdict, decided))
    decimals = (column_decimals(summary[speed.column], speed.unit) if speed.column in summary else None,
                column_decimals(summary[speed.pct_column], "%") if speed.pct_column in summary else None)
    return Ladder(tuple(rows), speed, headline_text(tuple(rows), speed, decimals, bool(gaps)))


def _figure(r: LadderRow, speed: Speed, decimals: tuple[int | None, int | None], unit: str = "") -> str:
    pct = f" ({fmt(r.pct, '%', decimals[1])} of {speed.ceiling})" if math.isfinite(r.pct) and speed.ceiling else ""
    return f"{fmt(r.gbps, speed.unit, decimals[0])} {unit or speed.unit}{pct}"


def headline_text(rows: tuple[LadderRow, ...], speed: Speed,
                  decimals: tuple[int | None, int | None] = (None, None), gapped: bool = False) -> str:
    """The ladder in one sentence: the fastest correct stage against the case's own ceiling and
    the baseline; the last stage too when it is not the fastest (or failed validation). "" with
    fewer than two stages or no figure. ``decimals``: of the GB/s and the % figures, as the
    page's cells print them (one figure reads the same everywhere). ``gapped``: the ladder lacks
    a stage or joins captures that are not comparable, so no ratio to the baseline is given."""
    good = [r for r in rows if r.verdict != "wrong" and math.isfinite(r.gbps)]
    if len(rows) < 2 or len(good) < 1:
        return ""
    best, first, last = max(good, key=lambda r: r.gbps), rows[0], rows[-1]
    d = decimals
    text = f"The fastest stage, {best.stage}, reaches {_figure(best, speed, d, speed.label)}"
    if best is not first and math.isfinite(first.gbps) and first.verdict != "wrong" and not gapped:
        text += f", {ratio(best.gbps, first.gbps):.2f}x the baseline {first.stage}"
    if last.verdict == "wrong":
        text += f"; the last stage, {last.stage}, failed validation: no speed is claimed for it"
    elif last is not best and math.isfinite(last.gbps):
        text += f"; the last stage, {last.stage}, reaches {_figure(last, speed, d)}"
    if speed.ceiling and math.isfinite(speed.ceiling_gbps):
        text += f"; {speed.ceiling}: {fmt(speed.ceiling_gbps, speed.unit, d[0])} {speed.unit}"
    return text + "."
