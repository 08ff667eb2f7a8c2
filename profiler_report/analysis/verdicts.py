"""Stage-to-stage deltas, expected effects judged, one-line verdicts."""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence

import pandas as pd

from profiler_report.errors import InputError
from profiler_report.metrics import COLUMNS_BY_NAME, ratio
from profiler_report.model.manifest import Stage
from profiler_report.util.fmt import column_decimals, fmt


def speed_column(summary: pd.DataFrame) -> str:
    """The time column a speed-up rests on: event timings when present, else ncu's duration."""
    if "event_median_us" in summary and summary["event_median_us"].notna().any():
        return "event_median_us"
    return "duration_us"


def deltas(summary: pd.DataFrame) -> pd.DataFrame:
    """Stage-to-stage changes between consecutive stages (role "stage" only).

    Columns: stage, previous, speedup (previous time / time, from :func:`speed_column`),
    speedup_ncu (from duration_us), excessive_wavefronts_removed, store_efficiency_gain_pts,
    load_efficiency_gain_pts.
    """
    stages = summary[summary["role"] == "stage"].reset_index(drop=True)
    col = speed_column(stages)
    rows = []
    for i in range(1, len(stages)):
        a, b = stages.iloc[i - 1], stages.iloc[i]
        rows.append({
            "stage": b["stage"], "previous": a["stage"],
            "speedup": ratio(a[col], b[col]), "speedup_source": col,
            "speedup_ncu": ratio(a["duration_us"], b["duration_us"]),
            "excessive_wavefronts_removed": a["shared_excessive_wavefronts"] - b["shared_excessive_wavefronts"],
            "store_efficiency_gain_pts": b["global_store_efficiency_pct"] - a["global_store_efficiency_pct"],
            "load_efficiency_gain_pts": b["global_load_efficiency_pct"] - a["global_load_efficiency_pct"],
        })
    return pd.DataFrame(rows, columns=["stage", "previous", "speedup", "speedup_source", "speedup_ncu",
                                       "excessive_wavefronts_removed", "store_efficiency_gain_pts",
                                       "load_efficiency_gain_pts"])


NO_EFFECT_REL = 0.05


def judge(old: float, new: float, direction: str, factor: float | None, to: float | None) -> tuple[str, str]:
    """Verdict on one expected movement: ("confirmed"|"refuted"|"no effect"|"not measured", why)."""
    if math.isnan(old) or math.isnan(new):
        return "not measured", "the capture lacks this metric for one of the two stages"
    scale = max(abs(old), abs(new), 1e-12)
    if abs(new - old) / scale < NO_EFFECT_REL and (to is None or not _near(new, to)):
        return "no effect", f"{_moved(old, new)} (changed by less than {NO_EFFECT_REL:.0%})"
    moved = _moved(old, new)
    right_way = new < old if direction == "down" else new > old
    if to is not None and _near(new, to):
        return "confirmed", f"{moved}, reached {_fmt(to)}"
    if not right_way:
        return "refuted", f"{moved}: moved {'up' if direction == 'down' else 'down'}, expected {direction}"
    if factor is not None:
        got = ratio(old, new) if direction == "down" else ratio(new, old)
        # NaN: a 0 divides (down to 0, or up from 0), which is beyond any factor.
        if not math.isnan(got) and got < factor * (1 - 1e-9):
            return "refuted", f"{moved}: {got:.2f}x, expected at least {factor:g}x"
    if to is not None:
        return "refuted", f"{moved}: expected to reach {_fmt(to)}"
    return "confirmed", moved


def _near(x: float, target: float) -> bool:
    if target == 0:
        return abs(x) < 0.5
    return abs(x - target) <= 0.10 * abs(target)


def _fmt(x: float, unit: str = "", decimals: int | None = None) -> str:
    return "n/a" if math.isnan(x) else fmt(x, unit, decimals)


def _moved(old: float, new: float, unit: str = "") -> str:
    """'old -> new', the two with the same decimals (util.fmt's policy)."""
    d = column_decimals([old, new], unit)
    return f"{_fmt(old, unit, d)} -> {_fmt(new, unit, d)}"


def slower_beyond_spread(slow_p10_us: float, fast_p90_us: float) -> bool:
    """The one spread rule: a timing is slower than another beyond the run-to-run spread when its
    p10 lies above the other's p90 (event-timed p10-p90 ranges that do not overlap). False on NaN."""
    return slow_p10_us > fast_p90_us


def judge_timing(prev: pd.Series, row: pd.Series, direction: str) -> tuple[str, str]:
    """Verdict on an expected time change, from the event timings' spread rather than a fixed 5 %.

    "confirmed" when the p10-p90 ranges of the two stages do not overlap and the median moved the
    expected way; "refuted" when they do not overlap and it moved the other way; else "no effect".
    Source: event_median_us, event_p10_us, event_p90_us (CUDA events, median of N launches).
    """
    med0, med1 = float(prev.get("event_median_us", math.nan)), float(row.get("event_median_us", math.nan))
    lo0, hi0 = float(prev.get("event_p10_us", math.nan)), float(prev.get("event_p90_us", math.nan))
    lo1, hi1 = float(row.get("event_p10_us", math.nan)), float(row.get("event_p90_us", math.nan))
    if any(math.isnan(x) for x in (med0, med1, lo0, hi0, lo1, hi1)):
        return judge(med0, med1, direction, None, None)
    moved = (f"{_moved(med0, med1, 'us')} us (median; p10-p90 {_fmt(lo0, 'us')}-{_fmt(hi0, 'us')} -> "
             f"{_fmt(lo1, 'us')}-{_fmt(hi1, 'us')})")
    if slower_beyond_spread(lo0, hi1):
        return ("confirmed" if direction == "down" else "refuted"), moved + ": faster beyond the spread"
    if slower_beyond_spread(lo1, hi0):
        return ("confirmed" if direction == "up" else "refuted"), moved + ": slower beyond the spread"
    return "no effect", moved + ": the ranges overlap"


def check_expected_ids(expected: list[Stage], stage_ids: list[str]) -> None:
    """Every stage an ``--expect`` file names is a stage of the capture.

    Raises:
        InputError: one is not (the message names the closest stage labels).
    """
    for st in expected:
        if st.id not in stage_ids:
            close = difflib.get_close_matches(st.id, stage_ids, n=3, cutoff=0.0) or stage_ids[:3]
            raise InputError(f"--expect: stage {st.id!r} is not a stage of the capture",
                             f"closest stage labels: {', '.join(close)}; or label a launch --stage {st.id}=REGEX")


def judge_expectations(summary: pd.DataFrame, manifest_stages: list[Stage],
                       raw: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each manifest expectation judged against the summary (previous stage -> this stage).

    A metric that is no summary column is looked up among the raw ncu metrics of the two
    launches (``raw``: :meth:`Capture.wide`, launch_id x metric); absent there too, "not measured".

    Columns: stage, previous, metric, text, old, new, verdict, why.
    """
    stages = summary[summary["role"] == "stage"].reset_index(drop=True)
    index = {s: i for i, s in enumerate(stages["stage"])}
    rows = []
    for st in manifest_stages:
        if st.id not in index or index[st.id] == 0:
            continue
        a, b = stages.iloc[index[st.id] - 1], stages.iloc[index[st.id]]
        for e in st.expect:
            metric = e.metric
            if metric == "duration_us":
                metric = speed_column(stages)
            old, new = _value(a, metric, raw), _value(b, metric, raw)
            if metric == "event_median_us" and e.factor is None and e.to is None:
                verdict, why = judge_timing(a, b, e.direction)
            else:
                verdict, why = judge(old, new, e.direction, e.factor, e.to)
            if verdict == "not measured" and not _known(metric, stages, raw):
                why = _unknown_metric(metric, stages, raw)
            rows.append({"stage": st.id, "previous": a["stage"], "metric": metric, "text": e.text,
                         "old": old, "new": new, "verdict": verdict, "why": why})
    return pd.DataFrame(rows, columns=["stage", "previous", "metric", "text", "old", "new", "verdict", "why"])


def _known(metric: str, summary: pd.DataFrame, raw: pd.DataFrame | None) -> bool:
    """Whether every part of ``metric`` is a summary column or a raw ncu metric of the capture."""
    parts = [p.strip() for p in metric.split(" + ")]
    return all(p in summary.columns or (raw is not None and p in raw.columns) for p in parts)


def _unknown_metric(metric: str, summary: pd.DataFrame, raw: pd.DataFrame | None) -> str:
    """The why of a "not measured" verdict whose metric the capture has under no name (a typo,
    most often): the closest summary columns and ncu metrics."""
    names = [*summary.columns, *([] if raw is None else raw.columns)]
    missing = [p.strip() for p in metric.split(" + ") if p.strip() not in names]
    close = difflib.get_close_matches(missing[0], [str(n) for n in names], n=3, cutoff=0.6)
    return (f"no summary column or ncu metric named {missing[0]!r} in this capture"
            + (f" (closest: {', '.join(close)})" if close else ""))


def _value(row: pd.Series, metric: str, raw: pd.DataFrame | None) -> float:
    """A stage's value of ``metric``: its summary column, else the raw ncu metric of its launch;
    ``A + B`` is the sum of two (NaN when either is missing)."""
    if " + " in metric:
        return sum(_value(row, part.strip(), raw) for part in metric.split(" + "))
    if metric in row.index:
        return float(row.get(metric, math.nan))
    if raw is None or metric not in raw.columns or row.get("launch_id") not in raw.index:
        return math.nan
    return float(raw.loc[row["launch_id"], metric])


#: Metrics the one-line verdict mentions when they move, with how to phrase them.
_VERDICT_METRICS = (
    ("global_store_efficiency_pct", "global store efficiency", "%"),
    ("global_load_efficiency_pct", "global load efficiency", "%"),
    ("shared_wavefronts_per_load", "shared wavefronts per load", ""),
    ("shared_wavefronts_per_store", "shared wavefronts per store", ""),
    ("shared_excessive_wavefronts", "excessive shared wavefronts", ""),
    ("achieved_occupancy_pct", "achieved occupancy", "%"),
)


def _speed_phrase(prev: pd.Series, row: pd.Series, speed_col: str) -> str:
    """'1.39x faster than padded', or 'as fast as X within the run-to-run spread' when the event
    timings' p10-p90 ranges overlap."""
    sp = ratio(prev[speed_col], row[speed_col])
    if math.isnan(sp) or sp == 0:  # a time missing, or 0 on either side: no speed ratio applies
        return "speed not measured" if math.isnan(sp) else "speed ratio not applicable (a time of 0)"
    if speed_col == "event_median_us":
        lo0, hi0 = float(prev.get("event_p10_us", math.nan)), float(prev.get("event_p90_us", math.nan))
        lo1, hi1 = float(row.get("event_p10_us", math.nan)), float(row.get("event_p90_us", math.nan))
        if not any(math.isnan(x) for x in (lo0, hi0, lo1, hi1)) and hi1 >= lo0 and lo1 <= hi0:
            return f"as fast as {prev['stage']} within the run-to-run spread ({sp:.2f}x)"
    return f"{sp:.2f}x faster than {prev['stage']}" if sp >= 1 else f"{1 / sp:.2f}x slower than {prev['stage']}"


def _movement(prev: pd.Series, row: pd.Series, col: str, label: str, unit: str) -> str:
    a, b = float(prev.get(col, math.nan)), float(row.get(col, math.nan))
    if math.isnan(a) or math.isnan(b):
        return ""
    d = column_decimals([a, b], unit)
    return f"{label} {fmt(a, unit, d)} -> {fmt(b, unit, d)}"


def _label(metric: str) -> tuple[str, str]:
    """How a verdict names ``metric`` and its unit ("%" or ""): as :data:`_VERDICT_METRICS`, else
    the registry's label without its parenthesised unit, else the ncu name."""
    own = {c: (label, unit) for c, label, unit in _VERDICT_METRICS}
    if metric in own:
        return own[metric]
    col = COLUMNS_BY_NAME.get(metric)
    if col is None:
        return metric, ""
    return col.label.split(" (")[0], "%" if col.unit == "%" else ""


def _expected_parts(prev: pd.Series, row: pd.Series, expected: Sequence[tuple[str, str]]) -> list[str]:
    """'<metric> a -> b (<verdict>)' for each expected metric with a value on both sides; the time
    is left to the speed phrase."""
    out = []
    for metric, verdict in expected:
        if metric in ("duration_us", "event_median_us"):
            continue
        label, unit = _label(metric)
        text = _movement(prev, row, metric, label, unit)
        if text:
            out.append(f"{text} ({verdict})" if verdict else text)
    return out


def stage_verdict(prev: pd.Series | None, row: pd.Series, speed_col: str,
                  expected: Sequence[tuple[str, str]] = ()) -> str:
    """One line, computed from the numbers: the speed change relative to ``prev`` (event timings
    judged with their spread); then the metrics the stage's expected effect is about
    (``expected``: (summary column, verdict) pairs from :func:`judge_expectations`), each with its
    verdict, moved or not; then the other headline metrics that moved by more than 5 %, and the top
    stall reason when it changed. The stage's expectations table says why."""
    source = "event-timed median" if speed_col.startswith("event") else "ncu duration"
    if prev is None:
        return f"Baseline: {_fmt(row[speed_col], 'us')} us ({source})."
    first = _expected_parts(prev, row, expected)
    named = {m for m, _ in expected}
    parts = []
    for col, label, unit in _VERDICT_METRICS:
        a, b = float(prev.get(col, math.nan)), float(row.get(col, math.nan))
        if col in named or math.isnan(a) or math.isnan(b):
            continue
        if abs(b - a) > NO_EFFECT_REL * max(abs(a), abs(b), 1e-12) and abs(b - a) > 0.05:
            parts.append(_movement(prev, row, col, label, unit))
    top, prev_top = (str(r.get("top_stalls", "")).split(",")[0].strip().split(" ")[0] for r in (row, prev))
    if top and top != prev_top:
        parts.append(f"top stall {prev_top or 'n/a'} -> {top}")
    text = _speed_phrase(prev, row, speed_col)
    if first:
        text += "; expected effect: " + "; ".join(first)
    if parts:
        text += ("; also moved: " if first else "; measured changes: ") + "; ".join(parts)
    elif not first:
        text += "; no headline metric moved by more than 5%"
    return text + "."
