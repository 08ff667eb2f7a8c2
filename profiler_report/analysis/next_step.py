"""What to look at next, per stage: the transpose walk-through's order of diagnosis applied to
the numbers.

The walk-through ("CUDA matrix transpose walk-through: bank conflicts, [32][33] padding,
unrolling", one of the source articles cited in the transpose's stages.toml) diagnoses a
memory-bound kernel in this order: global coalescing, then shared-memory bank conflicts, then
warp stall reasons, then the instruction count. :func:`next_steps` walks that
order for each stage, stops at the first limit the stage still sits on, and names the first
later stage of the ladder that no longer sits on it. The thresholds are the constants below.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from profiler_report.util.fmt import fmt

#: Global load or store efficiency (bytes used per 32-byte sector, %) below which a stage is
#: uncoalesced: 80 % leaves room for edge tiles, a strided access sits at 12.5 % (4 of 32 bytes).
COALESCED_PCT = 80.0
#: Excessive shared wavefronts as a share of all shared wavefronts above which bank conflicts
#: are the limit (the committed conflict-free stages sit at 0, the 32-way smem stage near 0.97).
CONFLICT_SHARE = 0.10
#: Cycles per issued instruction of the top warp-stall reason above which stalls are the limit:
#: a warp that waits more than 4 cycles per instruction hides no latency on its own.
STALL_CYCLES = 4.0
#: % of memcpy at or above which a stage is said to be at the copy ceiling (whatever limit it
#: sits on, memcpy has it too).
AT_CEILING_PCT = 90.0
#: An instruction count this much lower (relative) counts as a later stage removing it.
FEWER_INSTRUCTIONS = 0.05


@dataclass(frozen=True)
class Limit:
    """One step of the order of diagnosis: its name, whether a stage sits on it, and the evidence."""

    name: str
    holds: Callable[[pd.Series, pd.DataFrame], bool]
    evidence: Callable[[pd.Series, pd.DataFrame], str]


def _num(row: pd.Series, col: str) -> float:
    v = row.get(col, math.nan)
    return math.nan if v is None else float(v)


def _uncoalesced(row: pd.Series, _: pd.DataFrame) -> bool:
    return any(_num(row, c) < COALESCED_PCT for c in ("global_load_efficiency_pct", "global_store_efficiency_pct"))


def _coalescing_evidence(row: pd.Series, _: pd.DataFrame) -> str:
    return (f"global load efficiency {fmt(_num(row, 'global_load_efficiency_pct'), '%')}, "
            f"store {fmt(_num(row, 'global_store_efficiency_pct'), '%')} (below {COALESCED_PCT:g}%)")


def _conflict_share(row: pd.Series) -> float:
    total = _num(row, "shared_load_wavefronts") + _num(row, "shared_store_wavefronts")
    exc = _num(row, "shared_excessive_wavefronts")
    return exc / total if total and total == total and exc == exc else math.nan


def _conflicted(row: pd.Series, _: pd.DataFrame) -> bool:
    return _conflict_share(row) > CONFLICT_SHARE


def _conflict_evidence(row: pd.Series, _: pd.DataFrame) -> str:
    return (f"{fmt(_conflict_share(row) * 100, '%')} of shared wavefronts are excessive "
            f"({fmt(_num(row, 'shared_excessive_wavefronts'))}; above {CONFLICT_SHARE:.0%})")


def _top_stall(row: pd.Series, stalls: pd.DataFrame) -> tuple[str, float]:
    sub = stalls[stalls["stage"] == row["stage"]] if not stalls.empty else stalls
    if sub.empty:
        return "", math.nan
    top = sub.sort_values("cycles_per_issue", ascending=False).iloc[0]
    return str(top["reason"]), float(top["cycles_per_issue"])


def _stalled(row: pd.Series, stalls: pd.DataFrame) -> bool:
    return _top_stall(row, stalls)[1] > STALL_CYCLES


def _stall_evidence(row: pd.Series, stalls: pd.DataFrame) -> str:
    reason, cycles = _top_stall(row, stalls)
    return f"top stall {reason} {fmt(cycles)} cycles per issued instruction (above {STALL_CYCLES:g})"


def _instructions_evidence(row: pd.Series, _: pd.DataFrame) -> str:
    return f"{fmt(_num(row, 'instructions_executed'))} warp instructions executed"


#: The order of diagnosis. The last step always holds: once the others are cleared, the
#: instruction count is what is left to cut.
ORDER: tuple[Limit, ...] = (
    Limit("coalescing", _uncoalesced, _coalescing_evidence),
    Limit("bank conflicts", _conflicted, _conflict_evidence),
    Limit("warp stalls", _stalled, _stall_evidence),
    Limit("instruction count", lambda row, _: not math.isnan(_num(row, "instructions_executed")),
          _instructions_evidence),
)


def _removed_by(limit: Limit, row: pd.Series, later: list[pd.Series], stalls: pd.DataFrame) -> str:
    if limit.name == "instruction count":
        n = _num(row, "instructions_executed")
        for r in later:
            if _num(r, "instructions_executed") <= n * (1 - FEWER_INSTRUCTIONS):
                return f"{r['stage']} cuts it to {fmt(_num(r, 'instructions_executed'))}"
        return "no later stage of the ladder cuts it"
    for r in later:
        if not limit.holds(r, stalls):
            return f"{r['stage']} removes it"
    return "no later stage of the ladder removes it"


def next_steps(summary: pd.DataFrame, stalls: pd.DataFrame) -> dict[str, str]:
    """Stage id -> one line: the first limit of :data:`ORDER` the stage sits on, its evidence,
    and which later stage removes it. Inputs: the analysis's summary (role "stage" rows, in
    ladder order) and stall table. Sources: global_load/store_efficiency_pct,
    shared_excessive_wavefronts over shared_load + shared_store_wavefronts, the stall table's
    cycles per issue, instructions_executed, pct_of_memcpy."""
    stages = [r for _, r in summary[summary["role"] == "stage"].iterrows()]
    out = {}
    for i, row in enumerate(stages):
        limit = next((lim for lim in ORDER if lim.holds(row, stalls)), None)
        if limit is None:
            out[str(row["stage"])] = "Not enough counters in this capture to follow the order of diagnosis."
            continue
        pct = _num(row, "pct_of_memcpy")
        ceiling = f"; at {fmt(pct, '%')} of memcpy this stage is at the copy ceiling" if pct >= AT_CEILING_PCT else ""
        out[str(row["stage"])] = (f"Next to look at ({ORDER.index(limit) + 1} of {len(ORDER)} in the order of "
                                  "diagnosis): "
                                  f"{limit.name}: {limit.evidence(row, stalls)}; "
                                  f"{_removed_by(limit, row, stages[i + 1:], stalls)}{ceiling}.")
    return out
