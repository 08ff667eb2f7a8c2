"""Where benchmark rows ran: whether the points of one sweep (bench rows, fanned-out results) ran on
GPUs that compare (one model, one driver). Read by ``live/fanout.py`` when a sweep is gathered
and by the report's notes on ``bench.json`` / ``sweep.json`` rows.
"""

from __future__ import annotations

from typing import Any


def mixed_gpus(wheres: list[dict[str, Any]]) -> str:
    """A warning when the points of one sweep (one comparison: its rows are compared with each
    other) ran on more than one GPU model or driver; '' when they agree. ``wheres``: dicts with
    ``gpu_name`` and ``gpu_driver`` (PointResult.where, or bench rows)."""
    kinds = sorted({(str(w.get("gpu_name", "")), str(w.get("gpu_driver", ""))) for w in wheres if w.get("host")})
    if len(kinds) < 2:
        return ""
    text = "; ".join(f"{g or 'unknown GPU'} (driver {d or 'unknown'})" for g, d in kinds)
    return f"points of one sweep ran on different GPU models or drivers: {text}; their rows are not comparable"
