"""Per-stage annotations."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from profiler_report.analysis import Analysis
from profiler_report.analysis.attribution import attribution
from profiler_report.capture.model import Capture
from profiler_report.cases.manifest import Manifest, stage_sources
from profiler_report.report.page import SUMMARY_COLUMNS, Page, StageSection
from profiler_report.util.fmt import fmt


def block_x(block: str) -> int | None:
    """'(256, 1, 1)' -> 256; None when the block shape is unknown."""
    m = re.match(r"\s*\(?\s*(\d+)", str(block or ""))
    return int(m.group(1)) if m else None


_SHARED_DECL = re.compile(r"__shared__[^;]*;")


def tile_shape(stage_id: str, manifest: Manifest | None, sources: dict[str, str]) -> str:
    """The stage's shared tile declaration as written in its source, or 'unknown (not in the capture)'."""
    src = sources.get(stage_id)
    if src is None:
        return "shared tile shape unknown (not in the capture)"
    decls = [" ".join(d.split()) for d in _SHARED_DECL.findall(src)]
    if not decls:
        return "no shared tile"
    tile = manifest.tile if manifest else 32
    text = "shared tile " + "; ".join(f"`{d}`" for d in decls)
    return text + (f" (TILE = {tile})" if re.search(r"\bTILE\b", text) else "")


def conflict_context(row: pd.Series, tile: str) -> str:
    """Block and tile shape and the conflict side, shown beside the excessive-wavefront figure."""
    ld, st = row.get("shared_excessive_wavefronts_ld", math.nan), row.get("shared_excessive_wavefronts_st", math.nan)
    if pd.isna(ld) or pd.isna(st):
        side = "by side: not available (no per-instruction values in this capture)"
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


def block_shape_warning(row: pd.Series, tile: str) -> str:
    """A warning when a launch with a 2-D block whose x-size is not 32 has excessive shared wavefronts."""
    x = block_x(row.get("block", ""))
    excessive = row.get("shared_excessive_wavefronts", math.nan)
    if x is None or x == 32 or pd.isna(excessive) or excessive <= 0:
        return ""
    if re.match(r"\s*\(?\s*\d+\s*,\s*1\b", str(row.get("block", ""))):
        return ""  # a 1-D block does not walk a 2-D tile by threadIdx.x: the x-size is no clue there
    return (f"This launch's block x-size is {x}, not 32, and it has {fmt(excessive)} excessive shared wavefronts "
            f"(block {row.get('block')}, {tile}). A one-element pad makes a tile column conflict-free only for "
            "32 consecutive threads walking it; with this block shape the threads of a warp map onto the tile "
            "differently, and these conflicts are real (wavefronts beyond the ideal), not a raw-counter artifact.")


def annotate_stages(page: Page, analysis: Analysis, capture: Capture | None = None,
                    manifest: Manifest | None = None, validation: list[dict[str, Any]] | None = None) -> None:
    """Fill each stage section's conflict context, warnings and attribution; mark wrong stages."""
    summary = analysis.summary
    source_text = manifest.source_text() if manifest else ""
    sources = stage_sources(source_text) if manifest else {}
    wrong = {v["stage"]: v for v in validation or [] if not v.get("correct", True)}
    by_stage = {r["stage"]: r for _, r in summary.iterrows()}
    for section in page.stages:
        row = by_stage.get(section.id)
        if row is None:
            continue
        tile = tile_shape(section.id, manifest, sources)
        section.conflict_context = conflict_context(row, tile)
        warning = block_shape_warning(row, tile)
        if warning:
            section.notes.append(warning)
        launch = row.get("launch_id")
        if capture is not None and launch is not None and not pd.isna(launch):
            section.attribution, section.attribution_note = attribution(
                capture, int(launch), source_text if section.id in sources else None)
        _not_collected(section, row)
        if section.id in wrong:
            _mark_wrong(page, section, wrong[section.id])
    cols = [c for c in SUMMARY_COLUMNS if c in summary]
    for r in page.summary_rows:
        if r["stage"] in wrong:
            r["verdict"] = "incorrect: validation failed, no speed is claimed"
            for c in cols:
                if c.startswith(_SPEED_COLUMNS):
                    _replace_summary_cell(page, analysis, r, c, "not claimed (incorrect)")
        elif r["stage"] in by_stage and str(by_stage[r["stage"]].get("shared_excessive_source")) == "not collected":
            _replace_summary_cell(page, analysis, r, "shared_excessive_wavefronts", "not collected")


def _not_collected(section: StageSection, row: pd.Series) -> None:
    if str(row.get("shared_excessive_source")) != "not collected":
        return
    for m in section.metrics:
        if m.name == "shared_excessive_wavefronts":
            m.value = "not collected"


#: Summary and metric columns that state a speed: a stage that failed validation claims none.
_SPEED_COLUMNS = ("event_", "pct_of_", "duration", "dram_throughput")


def _mark_wrong(page: Page, section: StageSection, v: dict[str, Any]) -> None:
    section.verdict = "Incorrect: this stage failed validation, so no speed is claimed for it."
    section.notes.append("WRONG result: " + str(v.get("message", "validation failed")))
    for m in section.metrics:
        if m.name.startswith(_SPEED_COLUMNS):
            m.value, m.change, m.moved = "not claimed (incorrect)", "", False


def _replace_summary_cell(page: Page, analysis: Analysis, row: dict[str, Any], column: str, text: str) -> None:
    cols = [c for c in SUMMARY_COLUMNS if c in analysis.summary]
    if column in cols:
        row["cells"][cols.index(column)] = text
