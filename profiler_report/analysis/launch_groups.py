"""A stage of several launches: its figures from theirs, and each kernel's share of its time.

A Python stage (PyTorch eager, a ``torch.compile``'d graph) launches several kernels in one
call, all inside its NVTX range ``pr_<case>.<stage>``; :func:`~profiler_report.analysis.stages.assign_stages`
gives them one stage label. Here they become one row of the stage's figures:

- counters, bytes and times (a metric rolled up as ``.sum``, ``.avg``, ``.min`` or ``.max``
  with no further submetric, and the per-instruction totals of the Source Counters, such as
  ``derived__memory_l1_wavefronts_shared_excessive``): the **sum** over the launches;
- ratios, percentages and rates (``.pct``, ``.ratio``, ``.per_second``, ``.pct_of_peak_*``
  ...): the **mean over the launches weighted by their duration** (``gpu__time_duration.sum``),
  except the stall reasons per issued instruction, weighted by instructions issued
  (``smsp__inst_issued.sum``) where the capture holds it: so each is the stage's own ratio;
- launch settings (``launch__*``: registers, shared memory, grid and block) and device
  attributes: **the longest launch's** (per-launch view: the kernel that takes the time).

The headline columns computed from these values (:func:`~profiler_report.metrics.headline_row`)
are then the stage's: DRAM bytes summed, sectors per request as summed sectors over summed
requests, DRAM throughput as summed bytes over summed time. A stage of one launch keeps its
launch's values exactly.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

import pandas as pd

from profiler_report.util.frames import tuples

#: What :data:`STAGE_RULE` says on the page and in summary.json about a stage of several launches.
STAGE_RULE = ("a stage of several launches: counts, bytes and times are summed over its launches; ratios, "
              "percentages and rates are their duration-weighted mean (stall reasons per issue: weighted by "
              "instructions issued); launch settings (registers, shared memory, grid, block) are its longest "
              "launch's")

_DURATION = "gpu__time_duration.sum"
_ISSUED = "smsp__inst_issued.sum"
_PER_ISSUE = re.compile(r"_per_issue_active\.ratio$")
#: A single-part name that is a ratio or a percentage, not a count (``sm__maximum_warps_per_active_cycle_pct``).
_NOT_A_COUNT = re.compile(r"(_pct|_ratio|_rate|_per_\w+)$")


def combine(metric: str) -> str:
    """How a stage of several launches combines ``metric``: "sum", "weighted" or "longest"."""
    if metric.startswith(("launch__", "device__", "profiler__", "numa__", "nvlink__")):
        return "longest"
    parts = metric.split(".")
    if len(parts) == 2 and parts[1] in ("sum", "avg", "min", "max"):
        return "sum"
    if len(parts) == 1 and not _NOT_A_COUNT.search(metric):
        return "sum"
    return "weighted"


def stage_values(wide: pd.DataFrame, launch_ids: list[int]) -> dict[str, float]:
    """One stage's raw metric values (name -> base-unit value) from its launches' rows of
    ``wide`` (:meth:`~profiler_report.capture.model.Capture.wide`), combined as :func:`combine`
    says; a metric no launch holds is left out (missing stays missing). One launch: its values."""
    rows = wide.loc[[i for i in launch_ids if i in wide.index]]
    if len(rows) <= 1:
        return {str(k): v for k, v in rows.iloc[0].dropna().items()} if len(rows) else {}
    duration = rows[_DURATION] if _DURATION in rows else pd.Series(1.0, index=rows.index)
    issued = rows[_ISSUED] if _ISSUED in rows else duration
    longest = duration.fillna(0).idxmax()
    out: dict[str, float] = {}
    for metric in rows.columns:
        col = rows[metric].astype(float)
        if col.isna().all():
            continue
        how = combine(str(metric))
        if how == "sum":
            out[metric] = float(col.sum(min_count=1))
        elif how == "longest":
            v = col.get(longest, math.nan)
            out[metric] = float(v if not pd.isna(v) else col.dropna().iloc[0])
        else:
            out[metric] = _weighted(col, issued if _PER_ISSUE.search(str(metric)) else duration)
    return out


def _weighted(col: pd.Series, weight: pd.Series) -> float:
    held = col.notna() & weight.notna()
    w = weight[held].astype(float)
    if not held.any() or float(w.sum()) <= 0:
        return float(col.dropna().mean())
    return float((col[held] * w).sum() / w.sum())


def stage_groups(stages: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(stage label, its launches' rows of ``stages``) in the order the stages first launch."""
    if stages.empty:
        return []
    order = list(dict.fromkeys(stages["stage"]))
    return [(s, stages[stages["stage"] == s]) for s in order]


def longest_launch(launches: pd.DataFrame, wide: pd.DataFrame) -> int:
    """The launch id of the longest of a stage's launches (ncu's ``gpu__time_duration.sum``);
    the first where no duration was collected."""
    ids = [int(i) for i in launches["launch_id"]]
    if _DURATION not in wide:
        return ids[0]
    dur = {i: _at(wide, i, _DURATION) for i in ids}
    known = {i: d for i, d in dur.items() if not math.isnan(d)}
    return max(known, key=lambda i: known[i]) if known else ids[0]


def stage_wide(capture_wide: pd.DataFrame, stages: pd.DataFrame) -> pd.DataFrame:
    """``capture_wide`` with one row per stage instead of one per launch: each stage's
    :func:`stage_values`, indexed by its longest launch's id (the row the summary names).
    What a raw-metric expected effect is judged on."""
    rows = {longest_launch(grp, capture_wide): stage_values(capture_wide, [int(i) for i in grp["launch_id"]])
            for _, grp in stage_groups(stages)}
    return pd.DataFrame.from_dict(rows, orient="index").reindex(columns=capture_wide.columns)


#: Columns of :func:`kernel_shares`.
SHARE_COLUMNS = ["stage", "launch_id", "kernel", "demangled", "grid", "block", "duration_us", "share_pct", "dram_bytes"]


def kernel_shares(stages: pd.DataFrame, wide: pd.DataFrame) -> pd.DataFrame:
    """One row per launch of every stage, in launch order: its kernel (short and demangled:
    PyTorch's reduce_kernel of a max and of a sum differ only there), grid and block, ncu's
    duration (us), its share of the stage's summed duration (%) and its DRAM bytes (read +
    written). NaN where the capture lacks the metric."""
    rows: list[dict[str, Any]] = []
    for stage, grp in stage_groups(stages):
        dur = {int(i): _at(wide, int(i), _DURATION) for i in grp["launch_id"]}
        total = sum(d for d in dur.values() if not math.isnan(d))
        for r in tuples(grp):
            lid = int(r.launch_id)
            d = dur[lid]
            dram = _at(wide, lid, "dram__bytes_read.sum") + _at(wide, lid, "dram__bytes_write.sum")
            rows.append({"stage": stage, "launch_id": lid, "kernel": str(r.kernel),
                         "demangled": str(getattr(r, "demangled", "") or r.kernel), "grid": str(r.grid),
                         "block": str(r.block), "duration_us": d / 1e3,
                         "share_pct": 100 * d / total if total > 0 and not math.isnan(d) else math.nan,
                         "dram_bytes": dram})
    return pd.DataFrame(rows, columns=SHARE_COLUMNS)


def _at(wide: pd.DataFrame, launch_id: int, metric: str) -> float:
    if metric not in wide or launch_id not in wide.index:
        return math.nan
    # wide is a pivot of the captures' float values; pandas-stubs types a cell as any scalar at all
    return float(cast(float, wide.at[launch_id, metric]))
