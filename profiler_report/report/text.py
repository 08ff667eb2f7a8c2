"""A run as text for a terminal, a script or a language model: ``summary``'s table (the default
on a terminal) and its agent text (``--format agent``).

The table is ``check``'s style (:func:`~profiler_report.util.fmt.text_table`), a dozen columns of
the summary with their units in the header, figures as the page writes them; columns that no
row measures are left out. The agent text is at most about 40 lines per ladder: per stage what it
changed, its verdict, its limiter (the bottleneck class from the speed-of-light throughputs and
the top stall reasons) and the next step, every figure from the same analysis as the report.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.analysis.assessment import stage_records
from profiler_report.analysis.ladder import Speed, speed_source
from profiler_report.metrics import COLUMNS_BY_NAME
from profiler_report.util.fmt import column_decimals, fmt, text_table

if TYPE_CHECKING:
    from profiler_report.analysis import Analysis
    from profiler_report.model.base import Case

#: The table's columns, in order (summary columns; the assessment's after them).
TABLE_COLUMNS = ("duration_us", "event_median_us", "event_gbps", "pct_of_copy_kernel", "global_load_efficiency_pct",
                 "global_store_efficiency_pct", "shared_excessive_wavefronts", "achieved_occupancy_pct",
                 "registers_per_thread")
#: Short headers of the table, with the unit.
_HEADERS = {"duration_us": "ncu us", "event_median_us": "event us", "event_gbps": "GB/s",
            "pct_of_copy_kernel": "% ceiling", "global_load_efficiency_pct": "ld eff %",
            "global_store_efficiency_pct": "st eff %", "shared_excessive_wavefronts": "excess wavefronts",
            "achieved_occupancy_pct": "occupancy %", "registers_per_thread": "regs"}
#: Lines the agent text keeps per ladder before it points at the JSON for the rest.
AGENT_MAX_LINES = 40


def summary_table(analysis: Analysis) -> str:
    """The per-stage table of an analysis: stage, role, the measured :data:`TABLE_COLUMNS`, memory
    and SM speed-of-light %, bottleneck."""
    s = analysis.summary
    cols = [c for c in TABLE_COLUMNS if c in s and s[c].notna().any()]
    assess = {a["stage"]: a for a in stage_records(analysis)}
    decimals = {c: column_decimals(s[c], COLUMNS_BY_NAME[c].unit) for c in cols}
    rows = []
    for r in s.to_dict("records"):
        a = assess[str(r["stage"])]
        rows.append([r["stage"], r["role"],
                     *(fmt(r[c], COLUMNS_BY_NAME[c].unit, decimals[c]) if not _nan(r[c]) else "-" for c in cols),
                     _pct(a["memory_sol_pct"]), _pct(a["compute_sol_pct"]), a["bottleneck"]])
    return text_table(["stage", "role", *(_HEADERS[c] for c in cols), "mem SOL %", "SM SOL %", "bottleneck"], rows)


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x: float | None) -> str:
    return "-" if x is None else fmt(x, "%")


def _speed(r: pd.Series, speed: Speed, ceiling: bool = False) -> str:
    """The stage's time, GB/s (TFLOP/s where the work model counts floating-point work) and its %
    of the ladder's ceiling: the page's (``speed``: memcpy for a copy-shaped case, else the case's
    own ceiling)."""
    if not _nan(r.get("event_gbps")):
        pct = r.get(speed.pct_column) if speed.pct_column else None
        ceiling_pct = f", {fmt(pct, '%')} of {speed.ceiling}" if not _nan(pct) and not ceiling else ""
        gbps = fmt(r["event_gbps"], "GB/s")
        tflops = r.get("event_tflops")  # the work model's floating-point work over the time, where it counts any
        work = f", {fmt(tflops, 'TFLOP/s')} TFLOP/s" if tflops is not None and not _nan(tflops) and tflops > 0 else ""
        return f"{fmt(r['event_median_us'], 'us')} us event-timed median, {gbps} GB/s{work}{ceiling_pct}"
    return f"{fmt(r['duration_us'], 'us')} us (ncu, a single profiled launch; no event timings)"


def _limiter(a: dict[str, Any]) -> str:
    stalls = ", ".join(f"{s['reason']} {fmt(s['cycles_per_issue'])}" for s in a["top_stalls"])
    sol = f"memory SOL {_pct(a['memory_sol_pct'])}, SM SOL {_pct(a['compute_sol_pct'])}"
    return f"{a['bottleneck']} ({sol}); top stalls (cycles per issue): {stalls or 'not measured'}"


def agent_text(analysis: Analysis, names: str, origin: str, case: Case | None = None) -> str:
    """At most :data:`AGENT_MAX_LINES` lines on an analysis for a language model: where the numbers
    come from (``names``: the captures; ``origin``: the GPU and the provenance's mode, e.g.
    "NVIDIA H200, live"), the ceiling, then per stage its change, speed, verdict, limiter and next
    step. Each "% of" is against the ceiling the page's ladder uses (``case``: its ceiling's kind
    and work unit; :func:`~profiler_report.analysis.ladder.speed_source`)."""
    s = analysis.summary.set_index("stage", drop=False)
    speed = speed_source(analysis.summary, case.manifest.ceiling.op if case else None,
                         work_unit=case.work_unit if case else "GB/s")
    recs = stage_records(analysis)
    lines = [f"profiler-report summary of {names}: {origin}; "
             f"{sum(a['role'] == 'stage' for a in recs)} stages in ladder order. Bottleneck classes come from "
             "ncu's speed-of-light throughputs (at roofline >= 95% of a roof; underutilized: both < 60%)."]
    for a in (a for a in recs if a["role"] != "stage"):
        lines.append(f"{a['role']} {a['stage']} ({a['kernel']}): {_speed(s.loc[a['stage']], speed, ceiling=True)}; "
                     f"{_limiter(a)}.")
    stages = [a for a in recs if a["role"] == "stage"]
    for i, a in enumerate(stages, 1):
        block = [f"{i}. {a['stage']} ({a['kernel']}): {a['change'] or a['title'] or 'change not stated'}",
                 f"   speed: {_speed(s.loc[a['stage']], speed)}. verdict: {a['verdict'] or 'none'}",
                 f"   limiter: {_limiter(a)}. next: {a['next_step'] or 'not stated'}"]
        if len(lines) + len(block) > AGENT_MAX_LINES - 1:
            lines.append(f"({len(stages) - i + 1} more stages: profiler-report summary --format json {names})")
            break
        lines += block
    return "\n".join(lines) + "\n"
