"""Applying parsed rules to a loaded run: which stages each rule targets, what it measures there.

Second step of the gate: :mod:`.grammar` gives the rules; here each is matched to its stages
(:func:`targets`), its metric measured on the run (:func:`measure`: the summary's headline
columns, the event timings from ``timings.json`` with their p10..p90 spread, or a raw metric of
the capture), its reference taken from the previous stage or the baseline run, and
:meth:`~.rules.Rule.evaluate` judges. :func:`exit_code` and :func:`counts` sum the results up;
:mod:`.output` prints them.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import TYPE_CHECKING

import pandas as pd

from profiler_report.analysis.launch_groups import stage_values
from profiler_report.analysis.stages import kernel_names
from profiler_report.errors import ThresholdsError
from profiler_report.gate.grammar import Thresholds, closest_hint
from profiler_report.gate.rules import TIMING_BY_NAME, Band, Result, Rule
from profiler_report.metrics import COLLECTED_BY, HEADLINE_BY_NAME, NCU_DURATION, SOURCE_COLUMN

if TYPE_CHECKING:
    from profiler_report.analysis.run import Run


def _row(run: Run, stage: str) -> pd.Series:
    """The summary row of ``stage``."""
    s = run.summary
    return s[s["stage"] == stage].iloc[0]


def measure(run: Run, stage: str, rule: Rule) -> tuple[Band | None, str]:
    """(value with its spread, why it is missing) of ``rule.metric`` on ``stage`` of ``run``.

    Headline values come from the summary (base units as in HEADLINE); timing values from
    ``timings.json`` (median with p10/p90; GB/s and % bands scale by median/p90 .. median/p10);
    raw values from the capture's metric table (units as normalized by extract).
    """
    row = _row(run, stage)
    if rule.kind == "headline":
        col = HEADLINE_BY_NAME[rule.metric]
        v = float(row.get(rule.metric, math.nan))
        if math.isnan(v):
            return None, _why_no_value(run, row, stage, rule.metric)
        return Band.point(v, col.unit), ""
    if rule.kind == "timing":
        return _timing_band(run, row, stage, rule.metric)
    v = _raw_value(run, stage, int(row["launch_id"]), rule.metric)
    if math.isnan(v):
        near = closest_hint(rule.metric, sorted(set(run.capture.metrics["metric"])))
        return None, (f"{rule.metric} not measured on {stage}: the capture does not hold it (another architecture, "
                      f"ncu version or --set?){' ' + near if near else ''}")
    m = run.capture.metrics
    units = m.loc[m["metric"] == rule.metric, ["launch_id", "unit"]]
    mine = units[units["launch_id"] == row["launch_id"]]
    unit = (mine if len(mine) else units)["unit"].iloc[0]  # a stage of several launches: any of theirs
    return Band.point(v, str(unit)), ""


def _raw_value(run: Run, stage: str, launch_id: int, metric: str) -> float:
    """A raw ncu metric of ``stage``: its launch's value, or, for a stage of several launches (a
    Python stage's call), their values combined as the summary combines them (summed counts,
    duration-weighted ratios: :func:`~profiler_report.analysis.launch_groups.stage_values`)."""
    stages = run.analysis.stages
    ids = [int(i) for i in stages.loc[stages["stage"] == stage, "launch_id"]] if "stage" in stages else []
    if len(ids) <= 1:
        return run.capture.value(launch_id, metric)
    return float(stage_values(run.capture.wide(), ids).get(metric, math.nan))


def _why_no_value(run: Run, row: pd.Series, stage: str, metric: str) -> str:
    """Why a headline column has no value on ``stage``: inputs missing from the capture, or (all
    of them there) a formula with no value for this launch, e.g. load efficiency without LDG."""
    col = HEADLINE_BY_NAME[metric]
    names = col.needs()
    if names and all(not math.isnan(run.capture.value(int(row["launch_id"]), n)) for n in names):
        why = col.note or "the formula gives no value for this launch"
        return f"{metric} is n/a on {stage}: {why} (its inputs are in the capture); gate another metric there"
    return f"{metric} not measured on {stage}: the capture lacks {_needs(names)}"


def _needs(names: tuple[str, ...]) -> str:
    """The ncu metrics a headline column's formula reads (the registry's
    :meth:`~profiler_report.metrics.Column.needs`), and the ncu options that collect them."""
    collect = sorted({COLLECTED_BY[n] for n in names if n in COLLECTED_BY})
    return " and ".join(dict.fromkeys(names)) + (f" (collect with {'; '.join(collect)})" if collect else "")


def _timing_band(run: Run, row: pd.Series, stage: str, metric: str) -> tuple[Band | None, str]:
    """An event-timing metric with its p10..p90 band; (None, why) without timings.json."""
    unit = TIMING_BY_NAME[metric].unit
    if not run.timings:
        return None, (f"{metric} not measured: no event timings (timings.json) beside {run.path}; "
                      "time is never gated on the single profiled duration")
    v = float(row.get(metric, math.nan))
    if math.isnan(v):
        return None, f"{metric} not measured: timings.json has no entry for stage {stage}"
    med, p10, p90 = (float(row.get(c, math.nan)) for c in ("event_median_us", "event_p10_us", "event_p90_us"))
    if metric == "event_median_us":
        lo, hi = p10, p90
    elif metric in ("event_p10_us", "event_p90_us"):
        lo = hi = v
    else:  # throughput-like: inversely proportional to time
        lo, hi = (v * med / p90, v * med / p10) if p10 > 0 and p90 > 0 else (v, v)
    lo = v if math.isnan(lo) else lo
    hi = v if math.isnan(hi) else hi
    return Band(v, min(lo, v), max(hi, v), unit), ""


def targets(rule: Rule, run: Run) -> list[str]:
    """The stages of ``run`` a rule applies to; [] when none and the rule is optional.

    Raises:
        ThresholdsError: a required stage is not in the capture, or a kernel regex matches none
            of the kernels' names (:func:`~profiler_report.analysis.stages.kernel_names`; the
            message lists the closest stage names).
    """
    stages = run.stages()
    if rule.stage is not None:
        if rule.stage in stages:
            return [rule.stage]
        found: list[str] = []
    else:
        rx = re.compile(str(rule.kernel))
        found = [str(r.stage) for r in run.analysis.stages.itertuples()
                 if any(rx.search(name) for name in kernel_names(r))]
        if found:
            return found
    if rule.optional and (rule.stage is None or _known_stage(rule, run)):
        return []
    what = f"stage {rule.stage!r}" if rule.stage is not None else f"a kernel matching {rule.kernel!r}"
    near = closest_hint(rule.stage, stages) if rule.stage is not None else ""
    raise ThresholdsError(f"{rule.where}: {what} is not in {run.path} (stages: {', '.join(stages)})",
                          near or "mark the section optional = true if the stage may be absent")


def _known_stage(rule: Rule, run: Run) -> bool:
    """Whether an optional section's stage may be absent: a stage id of the case that made the
    capture (its manifest's stages, ceiling and regression), or, for a capture made elsewhere,
    a name no capture stage is a near spelling of.

    Raises:
        ThresholdsError: the name is none of the case's stage ids (a typo would switch its rules
            off for good), or is a near spelling of a stage the capture holds.
    """
    name = str(rule.stage)
    if run.case is not None:
        m = run.case.manifest
        ids = [s.id for s in (*m.stages, m.ceiling, *([m.regression] if m.regression else []))]
        if name in ids:
            return True
        raise ThresholdsError(f"{rule.where}: stage {name!r} is not a stage of case {run.case.name} "
                              f"(stages: {', '.join(ids)}), so optional = true would skip its rules on every capture",
                              closest_hint(name.strip().lower(), ids) or f"name one of {', '.join(ids)}")
    near = [s for s in run.stages() if s.strip().casefold() == name.strip().casefold()]
    near = near or difflib.get_close_matches(name, run.stages(), n=3, cutoff=0.8)
    if near:
        raise ThresholdsError(f"{rule.where}: stage {name!r} is not in {run.path}, which holds "
                              f"{', '.join(near)}", f"did you mean {near[0]}?")
    return True


def _previous(run: Run, stage: str) -> str | None:
    """The stage launched before ``stage`` (ceiling rows skipped); None for the first."""
    only = [s for s, r in zip(run.summary["stage"], run.summary["role"], strict=True) if r == "stage"]
    if stage not in only or only.index(stage) == 0:
        return None
    return only[only.index(stage) - 1]


def _reference(rule: Rule, run: Run, stage: str, baseline: Run | None) -> tuple[Band | None, str]:
    """A relative rule's reference: its metric on the previous stage, or on ``stage`` of ``baseline``."""
    if rule.ref == "previous":
        prev = _previous(run, stage)
        if prev is None:
            return None, f"{stage} has no previous stage in {run.path}"
        band, why = measure(run, prev, rule)
        return band, why and f"previous stage {prev}: {why}"
    assert baseline is not None
    if stage not in baseline.stages():
        return None, f"the baseline {baseline.path} has no stage {stage!r}"
    band, why = measure(baseline, stage, rule)
    return band, why and f"baseline: {why}"


#: How close (difflib ratio) a raw metric name the capture does not hold must be to one it does
#: hold to be taken for a misspelling of it: one changed, missing or swapped character in a
#: 40-character name scores about 0.97. (A sibling that ncu collects in the same section, such as
#: ``..._op_st.sum`` beside ``..._op_ld.sum``, scores about 0.96: a capture holds both or neither.)
TYPO_CUTOFF = 0.9


def check_raw_name(rule: Rule, run: Run) -> None:
    """Refuse a raw ncu metric name that is a typo of one the capture holds.

    A raw name the capture holds on no launch is "not measured" (another architecture, ncu
    version or ``--set``) unless it is within :data:`TYPO_CUTOFF` of a name the capture does
    hold: then it is a misspelling, and a gate that never measures would pass silently under
    ``--missing warn``.

    Raises:
        ThresholdsError: naming the closest metric names of the capture.
    """
    if rule.kind != "raw":
        return
    held = run.capture.metric_names()
    if rule.metric in held:
        return
    near = difflib.get_close_matches(rule.metric, sorted(held), n=3, cutoff=TYPO_CUTOFF)
    if near:
        raise ThresholdsError(f"{rule.where}: rule '{rule.text}': {rule.metric} is not in {run.path}, which holds "
                              f"{', '.join(near)}", f"did you mean {near[0]}?")


def check_run(thresholds: Thresholds, run: Run, baseline: Run | None = None) -> list[Result]:
    """Every rule judged on every stage it applies to, in file order.

    Rules on an optional stage the capture lacks, and rules relative to ``baseline`` when there
    is none, come back "skipped". A stage that the run's validation.json marks incorrect gets one
    more result, a "fail" (metric "validation"): whatever its counters, a wrong kernel never passes.

    Raises:
        ThresholdsError: a required stage is missing, a raw metric name is a typo of one the
            capture holds (:func:`check_raw_name`), or a stated unit does not match a raw
            metric's unit in the capture.
    """
    for rule in thresholds.rules:  # all stage and name errors first: exit 2 before any verdict
        targets(rule, run)
        check_raw_name(rule, run)
    results = []
    for rule in thresholds.rules:
        hits = targets(rule, run)
        if not hits:
            results.append(Result(rule.target, rule.text, rule.metric, math.nan, math.nan, "", "skipped",
                                  f"stage not in {run.path} (optional)"))
        for stage in hits:
            results.append(_judge(rule, run, stage, baseline))
    return results + validation_failures(run)


def validation_failures(run: Run) -> list[Result]:
    """One "fail" per stage whose output the run's validation.json (beside the capture) marks
    incorrect, with its message; [] without validation.json (a capture made elsewhere)."""
    wrong = [v for v in run.sidecars.validation or [] if not v.get("correct", True)]
    return [Result(v["stage"], "output matches the reference (validation.json)", "validation", math.nan, math.nan,
                   "", "fail", f"the stage's output is wrong: {v.get('message') or 'marked incorrect'}")
            for v in wrong]


def _judge(rule: Rule, run: Run, stage: str, baseline: Run | None) -> Result:
    """One rule on one stage: measure, take the reference, evaluate."""
    if rule.ref == "baseline" and baseline is None:
        return Result(stage, rule.text, rule.metric, math.nan, math.nan, "", "skipped",
                      "compares with a baseline; pass --baseline OLD.ncu-rep")
    measured, why = measure(run, stage, rule)
    reference, why_ref = (None, "")
    if rule.ref is not None:
        reference, why_ref = _reference(rule, run, stage, baseline)
    return rule.evaluate(stage, measured, reference, why or why_ref, source=value_source(run, stage, rule))


def value_source(run: Run, stage: str, rule: Rule) -> str:
    """Where a headline value with a fallback came from on ``stage``: "ncu" (the metric itself),
    "computed" (its fallback formula) or "not collected" (:data:`~profiler_report.metrics.SOURCE_COLUMN`);
    "single profiled launch" for ncu's duration; "" for every other metric."""
    if rule.metric == NCU_DURATION:
        return "single profiled launch"  # ncu's gpu__time_duration.sum, not an event-timed median
    col = SOURCE_COLUMN.get(rule.metric) if rule.kind == "headline" else None
    return str(_row(run, stage).get(col, "")) if col else ""


def exit_code(results: list[Result], missing: str = "fail") -> int:
    """0 when every rule passed (or was skipped), 1 when any failed; "not measured" counts as a
    failure under ``missing="fail"`` and is only reported under ``missing="warn"``."""
    if any(r.verdict == "fail" for r in results):
        return 1
    if missing == "fail" and any(r.verdict == "not measured" for r in results):
        return 1
    return 0


def counts(results: list[Result]) -> dict[str, int]:
    """verdict -> number of results."""
    out = {"pass": 0, "fail": 0, "not measured": 0, "skipped": 0}
    for r in results:
        out[r.verdict] = out.get(r.verdict, 0) + 1
    return out
