"""The source a capture embeds, per stage: for a capture made elsewhere (no case, no stages.toml),
the kernel's own function out of the file ncu embedded (``ncu --import-source yes``).

A launch's per-instruction rows name the file and the lines its code came from (``-lineinfo``);
the stage's source is the function around those lines: from the ``__global__`` line at or above
the first of them to the first line at column 0 that closes a brace after the last.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from profiler_report.capture.model import Capture

#: Lines above a kernel's first attributed line searched for its ``__global__`` declaration.
_HEAD_LINES = 20


@dataclass(frozen=True)
class EmbeddedSource:
    """One stage's kernel as the capture embeds it: the file (path as ncu recorded it), the
    function's text and its first line (1-based) in that file."""

    file: str
    text: str
    first_line: int

    @property
    def name(self) -> str:
        return os.path.basename(self.file)


def _function(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """0-based [start, end) of the function around 1-based lines ``first``..``last``."""
    start = first - 1
    for i in range(first - 1, max(-1, first - 1 - _HEAD_LINES), -1):
        if "__global__" in lines[i]:
            start = i
            break
    end = min(last, len(lines))
    for j in range(last - 1, len(lines)):
        if lines[j].startswith("}"):
            end = j + 1
            break
    return start, end


def embedded_sources(capture: Capture | None, summary: pd.DataFrame) -> dict[str, EmbeddedSource]:
    """Stage -> its kernel's source as the capture embeds it; stages whose launch has no
    attributed line in an embedded file are left out (no ``-lineinfo``, or ncu found no file)."""
    texts = {f: t for f, t in (capture.source_files if capture is not None else {}).items() if t}
    if capture is None or capture.source.empty or not texts:
        return {}  # ncu lists a file it could not import with no text
    src = capture.source
    out = {}
    for r in summary.itertuples():
        rows = src[(src["launch_id"] == r.launch_id) & (src["line"] > 0) & src["file"].isin(texts)]
        if rows.empty:
            continue
        file = str(rows["file"].mode().iloc[0])
        lines = texts[file].splitlines()
        mine = rows[rows["file"] == file]["line"]
        if int(mine.max()) > len(lines):  # the embedded text is not the file the lines count in
            continue
        start, end = _function(lines, int(mine.min()), int(mine.max()))
        out[str(r.stage)] = EmbeddedSource(file, "\n".join(lines[start:end]), start + 1)
    return out
