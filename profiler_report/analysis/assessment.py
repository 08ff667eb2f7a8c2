"""Per stage, what a script or a language model acts on: the bottleneck class from the
speed-of-light throughputs, the top warp-stall reasons, the verdict and the next thing to look at.

The class follows the speed-of-light section of Nsight Compute (``--section SpeedOfLight``, in
every ``--set``): ``gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed`` (the
busiest memory unit, % of its peak) and ``sm__throughput.avg.pct_of_peak_sustained_elapsed``
(the busiest SM pipeline, % of its peak), both of the single profiled launch:

- "at roofline": either at or above :data:`AT_ROOF_PCT` of its peak;
- "underutilized": both below :data:`UNDERUSED_PCT` (neither roof limits it: latency, too few
  warps or bytes in flight, a serial tail);
- else "memory-bound" or "compute-bound", whichever throughput is higher;
- "not measured" when the capture lacks either metric.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from profiler_report.capture.model import Capture

MEMORY_SOL = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
COMPUTE_SOL = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
#: % of a roof at or above which a stage is at that roof.
AT_ROOF_PCT = 95.0
#: % below which a throughput leaves its roof unused; both below: underutilized.
UNDERUSED_PCT = 60.0
#: Stall reasons per stage in the assessment.
TOP_STALLS = 3

#: The bottleneck classes, in the order the module docstring defines them.
BOTTLENECKS = ("at roofline", "underutilized", "memory-bound", "compute-bound", "not measured")

ASSESSMENT_COLUMNS = ["stage", "bottleneck", "roof", "memory_sol_pct", "compute_sol_pct"]


def bottleneck(memory_pct: float, compute_pct: float) -> tuple[str, str]:
    """(class of :data:`BOTTLENECKS`, the roof it names: "memory", "compute" or "") for one
    launch's two speed-of-light throughputs in % of peak."""
    if math.isnan(memory_pct) or math.isnan(compute_pct):
        return "not measured", ""
    roof = "memory" if memory_pct >= compute_pct else "compute"
    if max(memory_pct, compute_pct) >= AT_ROOF_PCT:
        return "at roofline", roof
    if max(memory_pct, compute_pct) < UNDERUSED_PCT:
        return "underutilized", ""
    return f"{roof}-bound", roof


def assess(capture: Capture, summary: pd.DataFrame) -> pd.DataFrame:
    """One row per summary row (stages and ceilings): columns :data:`ASSESSMENT_COLUMNS`;
    memory_sol_pct and compute_sol_pct in % of peak (NaN when not in the capture)."""
    rows = []
    for stage, launch in zip(summary["stage"], summary["launch_id"].astype(int), strict=True):
        mem, comp = capture.value(int(launch), MEMORY_SOL), capture.value(int(launch), COMPUTE_SOL)
        cls, roof = bottleneck(mem, comp)
        rows.append({"stage": stage, "bottleneck": cls, "roof": roof, "memory_sol_pct": mem,
                     "compute_sol_pct": comp})
    return pd.DataFrame(rows, columns=ASSESSMENT_COLUMNS)


def top_stalls(stalls: pd.DataFrame, stage: str, n: int = TOP_STALLS) -> list[dict[str, Any]]:
    """The ``n`` largest stall reasons of ``stage`` from the analysis's stall table:
    [{"reason", "cycles_per_issue"}], largest first."""
    sub = stalls[stalls["stage"] == stage].sort_values("cycles_per_issue", ascending=False).head(n)
    return [{"reason": str(reason), "cycles_per_issue": float(cycles)}
            for reason, cycles in zip(sub["reason"], sub["cycles_per_issue"], strict=True)]


def stage_records(analysis: Any) -> list[dict[str, Any]]:
    """The assessment of every summary row as JSON-ready records (the ``assessment`` key of the
    summary document): stage, role, kernel, title, change (the manifest's, "" for a capture made
    elsewhere), bottleneck, roof, memory_sol_pct, compute_sol_pct, top_stalls, verdict, next_step
    (the analysis's ``next_steps``; "" for a ceiling)."""
    from profiler_report.analysis.next_step import next_steps

    summary = analysis.summary
    steps = next_steps(summary, analysis.stalls)
    by_stage = {str(r["stage"]): r for r in analysis.assessment.to_dict("records")} \
        if not analysis.assessment.empty else {}
    out = []
    for r in summary.itertuples():
        sid = str(r.stage)
        a = by_stage.get(sid, {"bottleneck": "not measured", "roof": "", "memory_sol_pct": math.nan,
                               "compute_sol_pct": math.nan})
        info = analysis.stage_info.get(sid)
        out.append({"stage": sid, "role": str(r.role), "kernel": str(r.kernel),
                    "title": info.title if info else "", "change": info.change if info else "",
                    "bottleneck": a["bottleneck"], "roof": a["roof"],
                    "memory_sol_pct": _finite(a["memory_sol_pct"]), "compute_sol_pct": _finite(a["compute_sol_pct"]),
                    "top_stalls": top_stalls(analysis.stalls, sid), "verdict": analysis.verdicts.get(sid, ""),
                    "next_step": _NEXT_PREFIX.sub("", steps.get(sid, ""))})
    return out


#: The page's lead-in of a next step ("Next to look at (2 of 4 in ...): "): the record keeps the step.
_NEXT_PREFIX = re.compile(r"^Next to look at \([^)]*\): ")


def _finite(x: Any) -> float | None:
    return float(x) if x is not None and isinstance(x, float | int) and math.isfinite(x) else None
