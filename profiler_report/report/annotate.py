"""The conflict figure's context in a stage section: block and tile shape, the load/store side."""

from __future__ import annotations

import math

import pandas as pd

from profiler_report.util.fmt import fmt


def conflict_context(row: pd.Series, tile: str) -> str:
    """Block and tile shape and the conflict side, shown beside the excessive-wavefront figure."""
    ld, st = row.get("shared_excessive_wavefronts_ld", math.nan), row.get("shared_excessive_wavefronts_st", math.nan)
    if pd.isna(ld) or pd.isna(st):
        side = ("by side: not collected (no per-instruction values with readable SASS in this capture, so "
                "loads and stores cannot be told apart)")
    else:
        side = f"by side: loads {fmt(ld)}, stores {fmt(st)}"
        if st > 0 and ld == 0:
            side += " (the conflicts sit on the store side)"
        elif ld > 0 and st == 0:
            side += " (the conflicts sit on the load side)"
    return (f"Excessive shared wavefronts {_excessive_text(row)}, {side}. "
            f"Launch shape: block {row.get('block', '?')}, grid {row.get('grid', '?')}; {tile}.")


def _excessive_text(row: pd.Series) -> str:
    source = str(row.get("shared_excessive_source", ""))
    value = row.get("shared_excessive_wavefronts", math.nan)
    if source == "not collected" or pd.isna(value):
        return "not collected"
    return fmt(value) + (" (computed: wavefronts minus ideal)" if source == "computed" else "")

