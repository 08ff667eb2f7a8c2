"""Transpose-specific notes beside a stage's conflict figures: the shared tile as declared, and
the block-x-not-32 trap (a one-element pad makes a column conflict-free only for 32 consecutive
threads walking it)."""

from __future__ import annotations

import math
import re

import pandas as pd

from profiler_report.util.fmt import fmt


def block_x(block: str) -> int | None:
    """'(256, 1, 1)' -> 256; None when the block shape is unknown."""
    m = re.match(r"\s*\(?\s*(\d+)", str(block or ""))
    return int(m.group(1)) if m else None


_SHARED_DECL = re.compile(r"__shared__[^;]*;")


def tile_shape(src: str | None, tile: int = 32) -> str:
    """The stage's shared tile declaration as written in its source, or 'unknown (not in the capture)'."""
    if src is None:
        return "shared tile shape unknown (not in the capture)"
    decls = [" ".join(d.split()) for d in _SHARED_DECL.findall(src)]
    if not decls:
        return "no shared tile"
    text = "shared tile " + "; ".join(f"`{d}`" for d in decls)
    return text + (f" (TILE = {tile})" if re.search(r"\bTILE\b", text) else "")


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
