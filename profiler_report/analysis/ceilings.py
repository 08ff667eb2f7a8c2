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
