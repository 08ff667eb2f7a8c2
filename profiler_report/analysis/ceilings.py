"""The ceiling a benchmark point is judged against, written once for bench (which records it in
each row) and the report (which applies it to files recorded before rows carried it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def point_ceiling(rows: Iterable[dict[str, Any]]) -> tuple[str, float] | None:
    """(label, GB/s) of the ceiling of one point (the rows of one size and dtype), or None
    without a timed copy.

    DRAM points: memcpy of the same size in the same process ("memcpy"). L2-resident points
    (``resident`` "L2": input + output fit in the GPU's L2): the fastest same-size copy there,
    memcpy or a copy kernel (rows of kind "ceiling"), labelled "L2 ceiling: <its name>"; there
    memcpy is not the ceiling (stages reach more than 100 % of it). Source: the rows' ``gbps``
    (CUDA-event medians); wrong rows (note "WRONG...") are left out.
    """
    copies = [r for r in rows if r.get("kind") == "ceiling" and r.get("gbps") is not None
              and r["gbps"] == r["gbps"] and not str(r.get("note", "")).startswith("WRONG")]
    if not copies:
        return None
    memcpy = next((r for r in copies if r["name"] == "memcpy"), copies[0])
    if memcpy.get("resident") != "L2":
        return "memcpy", float(memcpy["gbps"])
    top = max(copies, key=lambda r: r["gbps"])
    return f"L2 ceiling: {top['name']}", float(top["gbps"])


#: How far above its ceiling a stage may time before it is called out: the event timings'
#: run-to-run spread on the H200 stays within a few percent.
OUTRUN_TOLERANCE_PCT = 5.0


def outruns_ceiling_note(pct_of_ceiling: Any, ceiling: str) -> str:
    """A stage's note when it ran faster than its own ceiling kernel (``pct_of_copy_kernel``, its
    event-timed GB/s as a percentage of the ceiling's) by more than :data:`OUTRUN_TOLERANCE_PCT`;
    "" otherwise or when not measured. Such a ceiling bounds nothing: it usually keeps fewer bytes
    in flight per access than the stage."""
    try:
        pct = float(pct_of_ceiling)
    except (TypeError, ValueError):
        return ""
    if not pct == pct or pct <= 100.0 + OUTRUN_TOLERANCE_PCT:
        return ""
    return (f"This stage ran at {pct:.0f}% of its ceiling kernel `{ceiling}` (event-timed GB/s): a ceiling slower "
            "than a stage bounds nothing. Give the ceiling as many bytes per access as the best stage (16-byte "
            "loads and stores) so that it is a copy this ladder cannot beat.")
