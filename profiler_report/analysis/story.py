"""Everything the report tells beyond the summary tables, judged once before the page is laid
out: the ladder and its headline (:mod:`~profiler_report.analysis.ladder`), the source
articles' claims, each stage's next limit, bank-map note and per-instruction attribution, and
which timing run the peers' figures come from. The report only formats a :class:`Story`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis
from profiler_report.analysis.attribution import attribution
from profiler_report.analysis.claims import judge_claims
from profiler_report.analysis.ladder import SPEED_FIELDS, Ladder, ladder
from profiler_report.analysis.next_step import next_steps
from profiler_report.analysis.sweeps import shape_table, shape_verdicts, stage_label, sweep_table, sweep_verdicts
from profiler_report.capture.model import Capture
from profiler_report.capture.sidecars import Sidecars
from profiler_report.model.base import Case
from profiler_report.model.experiment import ExperimentTable
from profiler_report.util.fmt import column_decimals, fmt
from profiler_report.util.jsonable import records


@dataclass(frozen=True)
class StageStory:
    """What one stage's section tells besides its metrics: the next limit it sits on ('' when
    not judged), the bank-map note ('' without a map), the per-instruction rows
    (:func:`~profiler_report.analysis.attribution.attribution`) and how they were attributed."""

    next_step: str = ""
    bank_map_note: str = ""
    attribution: tuple[dict[str, Any], ...] = ()
    attribution_note: str = ""


@dataclass(frozen=True)
class Story:
    """The judged story of one run: ``ladder``, the experiments' tables, the claims
    (:data:`~profiler_report.analysis.claims.CLAIM_COLUMNS` records), per stage id its
    :class:`StageStory`, ``peers_note`` (which run the peers' GB/s come from; '' without peers)
    and the sweeps judged."""

    ladder: Ladder
    experiments: tuple[ExperimentTable, ...] = ()
    claims: tuple[dict[str, Any], ...] = ()
    stages: Mapping[str, StageStory] = field(default_factory=lambda: MappingProxyType({}))
    peers_note: str = ""
    #: The sweeps judged (:mod:`~profiler_report.analysis.sweeps`): sweep_table records (with
    #: ``stage_label``) and their verdicts; shape_table records and theirs. Empty without a sweep.
    sweep: tuple[dict[str, Any], ...] = ()
    sweep_verdicts: tuple[str, ...] = ()
    shapes: tuple[dict[str, Any], ...] = ()
    shape_verdicts: tuple[str, ...] = ()

    def stage(self, sid: str) -> StageStory:
        return self.stages.get(sid, StageStory())


def peers_run_note(summary: pd.DataFrame, bench: list[dict[str, Any]], unit: str = "GB/s") -> str:
    """Which run the peers table's figures (GB/s, or TFLOP/s: ``unit``) come from, against the
    timing run the ladder shows: the stages timed in both and the largest difference between the
    two runs, and where. '' when no stage is in both."""
    col, key = SPEED_FIELDS.get(unit, SPEED_FIELDS["GB/s"])
    if col not in summary:
        return ""
    ours = {r["stage"]: float(r[col]) for _, r in summary.iterrows()
            if math.isfinite(float(r[col])) and float(r[col]) > 0}
    theirs = {r["name"]: float(r[key]) for r in bench
              if r.get("kind") in ("stage", "ceiling") and r.get(key) is not None and r[key] == r[key]}
    both = [n for n in ours if n in theirs]
    if not both:
        return ""
    worst = max(both, key=lambda n: abs(theirs[n] / ours[n] - 1) if ours[n] else 0.0)
    d = column_decimals([ours[worst], theirs[worst]], unit)
    return (f"Two timing runs, side by side: \"peer run\" is bench.json (the stages timed in one process with "
            f"the peers, the fair comparison with them); \"timing run\" is timings.json, the figure the rest "
            f"of the page shows. They differ by up to {abs(theirs[worst] / ours[worst] - 1):.1%} "
            f"({worst}: {fmt(ours[worst], decimals=d)} and {fmt(theirs[worst], decimals=d)} {unit}), "
            "the run-to-run spread.")


def _bank_note(spec: dict[str, Any], row: pd.Series) -> str:
    measured = float(row.get("shared_wavefronts_per_load", math.nan))
    return (f"Predicted from the layout: {spec['wavefronts']} wavefront(s) per shared read instruction of the "
            f"warp drawn (ideal {spec['ideal']}). Measured for the whole launch: {fmt(measured)} shared "
            "wavefronts per load instruction (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / "
            "smsp__sass_inst_executed_op_shared_ld.sum).")


def _stage_stories(analysis: Analysis, case: Case | None, capture: Capture | None, dtype: str,
                   counters: str) -> dict[str, StageStory]:
    """Per stage: next limit, bank-map note and attribution (none without counters)."""
    if counters:
        return {}
    summary = analysis.summary
    lines = next_steps(summary, analysis.stalls)
    maps = {m["stage"]: m for m in case.bank_maps(dtype)} if case else {}
    # NVRTC's in-memory file is the case's kernel source; a Python stage's kernels name their own
    # files (stages.py for Triton, ATen's for PyTorch): only the text ncu embedded is theirs.
    own = case.manifest.source_text() if case and case.compiles_cuda else None
    out = {}
    for _, row in summary[summary["role"] == "stage"].iterrows():
        sid, launch = str(row["stage"]), row.get("launch_id")
        rows: list[dict[str, Any]] = []
        note = ""
        if capture is not None and launch is not None and not pd.isna(launch):
            rows, note = attribution(capture, int(launch), own)
        out[sid] = StageStory(lines.get(sid, ""), _bank_note(maps[sid], row) if sid in maps else "",
                              tuple(rows), note)
    return out


def _sweeps(rows: list[dict[str, Any]] | None) -> dict[str, tuple[Any, ...]]:
    """The sweep's and the block-shape sweep's records and verdicts ({} without rows)."""
    frame = sweep_table(rows) if rows else pd.DataFrame()
    shapes = shape_table(rows) if rows else pd.DataFrame()
    out: dict[str, tuple[Any, ...]] = {}
    if not frame.empty:
        labelled = frame.assign(stage_label=[stage_label(r) for _, r in frame.iterrows()])
        out.update(sweep=tuple(records(labelled)), sweep_verdicts=tuple(sweep_verdicts(frame)))
    if not shapes.empty:
        out.update(shapes=tuple(records(shapes)), shape_verdicts=tuple(shape_verdicts(shapes)))
    return out


def tell(analysis: Analysis, case: Case | None, *, capture: Capture | None = None, side: Sidecars | None = None,
         counters: str = "", dtype: str = "float32", experiments: Iterable[ExperimentTable] = ()) -> Story:
    """The :class:`Story` of one analysis. ``case`` is the case that made the capture (None:
    made elsewhere); ``capture`` gives the per-instruction attribution (None without counters);
    ``side``: the run's sidecar files (timings, validation: the stages that failed it, bench,
    sweep); ``counters``: '' when collected, else why not; ``experiments``: the case's experiment
    tables (:func:`~profiler_report.analysis.experiments.experiment_tables`), iterated once the
    stage stories are told (a generator may be still reading their captures until then)."""
    side = side or Sidecars()
    timings, bench, sweep = side.timings, side.bench, side.sweep
    wrong = frozenset(str(v["stage"]) for v in side.validation or [] if not v.get("correct", True))
    info = analysis.stage_info or ({s.id: s for s in case.manifest.stages} if case else {})
    lad = ladder(analysis.summary, analysis.expectations, info,
                 case.manifest.ceiling.op if case else None, wrong, timings, frozenset(analysis.breaks),
                 case.work_unit if case else "GB/s")
    stories = _stage_stories(analysis, case, capture, dtype, counters)
    tables = tuple(experiments)
    points = {f"{t.id}/{p}": v for t in tables for p, v in t.values.items()}
    claims = records(judge_claims(case.manifest.claims, analysis.summary, points)) \
        if case is not None and case.manifest.claims else []
    return Story(lad, tables, tuple(claims), MappingProxyType(stories),
                 peers_run_note(analysis.summary, bench or [], case.work_unit if case else "GB/s"), **_sweeps(sweep))
