"""Per-instruction attribution of a launch."""

from __future__ import annotations

import os
from typing import Any

from profiler_report.capture.model import Capture
from profiler_report.util.fmt import fmt

#: Rows of the per-instruction table per stage.
ATTRIBUTION_ROWS = 8


NO_LINEINFO = "built without -lineinfo: attributed to SASS (the capture has no CUDA source lines for this kernel)"


def _short_file(path: str) -> str:
    """File name for the location column; NVRTC's hashed in-memory name reads 'NVRTC source'."""
    base = os.path.basename(path)
    return "NVRTC source" if base.endswith(".cubin.cu") and len(base) > 40 else base


def attribution(capture: Capture | None, launch_id: int, own_source: str | None) -> tuple[list[dict[str, Any]], str]:
    """(rows, note) of the per-instruction table of one launch.

    Rows are the shared-memory instructions, else the most executed ones (ATTRIBUTION_ROWS at
    most). ``own_source`` is the text of kernels/transpose.cu for the project's own stages (NVRTC
    compiles it as-is, so the capture's line numbers are lines of that file).
    """
    if capture is None or capture.source.empty:
        kind = "a CSV export" if capture is not None and capture.kind.startswith("csv") else "this capture"
        return [], f"No per-instruction values in {kind} (Source Counters): no attribution to source lines or SASS."
    sub = capture.source[capture.source["launch_id"] == launch_id]
    if sub.empty:
        return [], "No per-instruction values for this launch: no attribution to source lines or SASS."
    shared = sub[sub["side"] != ""]
    pick = shared if not shared.empty else sub
    key = "shared_excessive_wavefronts" if not shared.empty else "inst_executed"
    pick = pick.sort_values([key, "pc_offset"], ascending=[False, True], na_position="last").head(ATTRIBUTION_ROWS)
    pick = pick.sort_values("pc_offset")
    has_lines = bool((sub["line"] > 0).any())
    texts = {f: t for f, t in capture.source_files.items() if t}
    own_lines = own_source.splitlines() if own_source else []
    rows = []
    for r in pick.itertuples():
        line_text = ""
        if r.line > 0 and r.file in texts:
            line_text = _line(texts[r.file].splitlines(), r.line)
        elif r.line > 0 and own_lines:
            line_text = _line(own_lines, r.line)
        shared_fmt = fmt if r.side else (lambda _v: "-")
        rows.append({
            "location": f"{_short_file(r.file)}:{r.line}" if r.line > 0 else f"SASS +0x{r.pc_offset:x}",
            "line_text": line_text, "sass": r.sass, "side": r.side or "-",
            "inst_executed": fmt(r.inst_executed), "shared_wavefronts": shared_fmt(r.shared_wavefronts),
            "shared_ideal_wavefronts": shared_fmt(r.shared_ideal_wavefronts),
            "shared_excessive_wavefronts": shared_fmt(r.shared_excessive_wavefronts),
        })
    what = "shared-memory instructions" if not shared.empty else f"the {len(rows)} most executed instructions"
    if not has_lines:
        return rows, f"{NO_LINEINFO}. Showing {what}."
    files = sorted({f for f in sub["file"] if f})
    if all(f in texts for f in files):
        return rows, f"Showing {what}, with the source text the capture embeds."
    if own_lines:
        return rows, (f"Showing {what}. The capture has line numbers but not the source text (ncu could not import "
                      "the NVRTC in-memory file); NVRTC compiled kernels/transpose.cu as-is, so the line text shown "
                      "is that file's, as it is now.")
    return rows, (f"Showing {what} by line number: the capture has line information but ncu could not import the "
                  f"source file ({', '.join(os.path.basename(f) for f in files)}), so no source text is shown.")


def _line(lines: list[str], n: int) -> str:
    return lines[n - 1].strip() if 0 < n <= len(lines) else ""
