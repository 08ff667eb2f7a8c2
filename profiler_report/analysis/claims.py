"""The source articles' claims (``[[claims]]`` of a case's manifest) judged on the measurements.

Case-neutral: a claim names a summary column of a stage, a speed-up between two stages, or a
figure of a point of one of the case's experiments; a case with no claims gets no table.
"""

from __future__ import annotations

import math

import pandas as pd

from profiler_report.analysis.verdicts import speed_column
from profiler_report.metrics import ratio
from profiler_report.model.manifest import Claim
from profiler_report.util.fmt import fmt

#: How close a value must come to a claim's ``equals`` (relative), as expectations' ``to``.
EQUALS_REL = 0.10
#: ``equals = 0`` holds below this (a count of 0.3 per launch is 0).
ZERO_BELOW = 0.5
CLAIM_COLUMNS = ["source", "says", "metric", "at", "predicts", "measured", "verdict", "why"]


def claim_value(claim: Claim, summary: pd.DataFrame,
                points: dict[str, dict[str, float]] | None = None) -> tuple[float, str]:
    """(the measured value a claim is about, where it came from); NaN when not measured here.

    ``points`` maps ``<experiment>/<point>`` to that point's measured figures.
    """
    stages = summary[summary["role"] == "stage"]
    by_id = {str(r["stage"]): r for _, r in stages.iterrows()}
    if "/" in claim.at:
        got = (points or {}).get(claim.at, {})
        value = float(got.get(claim.metric, math.nan))
        where = "(experiment capture)" if got else ": not in this report's experiment capture"
        return value, f"{claim.at} {where}" if got else f"{claim.at}{where}"
    if claim.at not in by_id:
        return math.nan, f"stage {claim.at} is not in this capture"
    if claim.metric == "speedup":
        if claim.over not in by_id:
            return math.nan, f"stage {claim.over} is not in this capture"
        col = speed_column(stages)
        where = "event-timed medians" if col.startswith("event") else "ncu durations"
        return ratio(by_id[claim.over][col], by_id[claim.at][col]), f"{claim.over} / {claim.at} time ({where})"
    row = by_id[claim.at]
    if claim.metric not in row.index:
        return math.nan, f"{claim.metric} is not a column of this capture's summary"
    return float(row[claim.metric]), f"stage {claim.at}"


def judge_claim(claim: Claim, value: float) -> tuple[str, str]:
    """("confirmed" | "refuted" | "not measurable here" | "not measured", why) for one value."""
    if not claim.metric:
        return "not measurable here", claim.why_not
    if math.isnan(value):
        return "not measured", "no value in this capture"
    fails = []
    if claim.equals is not None:
        target = claim.equals
        ok = abs(value) < ZERO_BELOW if target == 0 else abs(value - target) <= EQUALS_REL * abs(target)
        if not ok:
            fails.append(f"not {fmt(claim.equals)} (within {EQUALS_REL:.0%})" if claim.equals else "not 0")
    if claim.above is not None and not value > claim.above:
        fails.append(f"not above {fmt(claim.above)}")
    if claim.below is not None and not value < claim.below:
        fails.append(f"not below {fmt(claim.below)}")
    if claim.min is not None and value < claim.min:
        fails.append(f"below the claimed {fmt(claim.min)}")
    if claim.max is not None and value > claim.max:
        fails.append(f"beyond the claimed {fmt(claim.max)}")
    shown = f"{value:.2f}x" if claim.metric == "speedup" else fmt(value)
    return ("refuted", f"{shown}: {'; '.join(fails)}") if fails else ("confirmed", shown)


def judge_claims(claims: tuple[Claim, ...] | list[Claim], summary: pd.DataFrame,
                 points: dict[str, dict[str, float]] | None = None) -> pd.DataFrame:
    """Every claim judged. Columns: :data:`CLAIM_COLUMNS` (``metric`` names the ncu column and
    the article's own metric it replaces; ``measured`` is the value with where it came from)."""
    rows = []
    for c in claims:
        value, where = claim_value(c, summary, points) if c.metric else (math.nan, "")
        verdict, why = judge_claim(c, value)
        metric = c.metric or "none in Nsight Compute"
        if c.replaces:
            metric += f" (replaces {c.replaces})"
        shown = f"{value:.2f}x" if c.metric == "speedup" else fmt(value)
        measured = "" if not c.metric else where if math.isnan(value) else f"{shown} ({where})"
        rows.append({"source": c.source, "says": c.says, "metric": metric, "at": c.at, "predicts": c.predicts,
                     "measured": measured, "verdict": verdict, "why": why})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)
