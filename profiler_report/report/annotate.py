"""What a stage section says about its own limits: the conflict figure's context (block and tile
shape, the load/store side), the case's warnings, and where in the code the figures come from."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from profiler_report.analysis.attribution import attribution
from profiler_report.util.fmt import fmt

if TYPE_CHECKING:
    from profiler_report.report.page import PageInputs, StageSection


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


def add_stage_extras(section: StageSection, row: pd.Series, inp: PageInputs, source: str | None) -> None:
    """A stage section's conflict context (block, tile, side), the case's notes (the transpose's
    block-x-not-32 trap) and the per-instruction attribution."""
    if inp.counters:
        section.conflict_context = (f"Launch shape: block {row['block']}, grid {row['grid']}; counters "
                                    f"unavailable ({inp.counters}).")
        return
    tile, warnings = inp.case.stage_notes(row, source) if inp.case else ("shared tile shape unknown "
                                                                         "(not in the capture)", [])
    section.conflict_context = conflict_context(row, tile)
    section.notes.extend(warnings)
    launch = row.get("launch_id")
    if inp.capture is not None and launch is not None and not pd.isna(launch):
        # NVRTC's in-memory file is the case's kernel source; a Python stage's kernels name their own
        # files (stages.py for Triton, ATen's for PyTorch): only the text ncu embedded is theirs.
        own = inp.case.manifest.source_text() if inp.case and inp.case.compiles_cuda and source is not None else None
        section.attribution, section.attribution_note = attribution(inp.capture, int(launch), own)
