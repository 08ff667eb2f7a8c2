"""Report annotations that keep readers out of the known traps of profiler data.

Runs after :func:`profiler_report.render.build_page` and fills in what the page must say about
its own limits:

* where each time comes from and whether clocks were locked (``--clock-control base``), or that
  the capture does not say (foreign captures);
* several processes or devices in one file, details-page exports (rounded values);
* bank conflicts by side (load/store), the block and tile shape beside the conflict figure, and a
  warning when a launch whose block x-size is not 32 has excessive wavefronts (a padded tile
  really conflicts then);
* per-instruction attribution: CUDA source lines when the kernel has line information, else
  SASS with a note ("built without -lineinfo");
* a derived metric that is absent shows 'not collected', never 0; a stage that failed
  validation claims no speed.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from .analyze import Analysis
from .config import Manifest, stage_sources
from .extract import Capture
from .render import SUMMARY_COLUMNS, Page, StageSection, fmt

#: Rows of the per-instruction table per stage.
ATTRIBUTION_ROWS = 8
NO_LINEINFO = "built without -lineinfo: attributed to SASS (the capture has no CUDA source lines for this kernel)"


def page_notes(prov: dict[str, Any], capture: Capture | None = None) -> list[str]:
    """Notes for the top of the report: time sources, clock control, odd captures."""
    notes = [time_source_note(prov, capture)]
    if capture is not None:
        notes.extend(capture.notes)
        if capture.kind == "csv-details":
            notes.append("Read from a details-page CSV export: its values are rounded to 3-4 significant digits "
                         "and most analysis metrics are not on that page; export `--page raw` for the full analysis.")
    return [n for n in notes if n]


def time_source_note(prov: dict[str, Any], capture: Capture | None = None) -> str:
    """Which clocks the profiled durations ran at, from provenance's ``clock_control``."""
    cc = str(prov.get("clock_control", "") or "")
    if cc == "base":
        return ("Clocks were locked to base by ncu (--clock-control base) for the profiled launches: "
                "'duration (ncu)' figures are at base clock, while event-timed figures ran at the GPU's own "
                "clocks. Compare each only with figures of the same source.")
    if cc.startswith("none"):
        return ("ncu left the GPU clocks unlocked (--clock-control none): 'duration (ncu)' figures are single "
                "launches after ncu flushed the caches, at whatever clock the GPU ran; event-timed figures are "
                "medians of warm launches. They are different figures.")
    if cc.startswith("n/a"):
        return "No profiler ran: every time in this report is event-timed (CUDA events, median of the launches)."
    clock = measured_sm_clock(capture) if capture is not None else ""
    return ("Clock control of the profiled launches: unknown (not in the capture); 'duration (ncu)' figures are "
            "ncu's profiled launches." + (f" {clock}" if clock else ""))


#: What ncu 2025.3.1 prints when it profiles with --clock-control none.
UNLOCKED_CLOCKS = "Running with unmodified GPU clocks"


def clock_control_from_log(log: Path) -> str:
    """Clock control of a capture from the ncu.log beside it: 'none (...)' when ncu said it left
    the clocks alone, else 'unknown (not in the capture)'. ncu prints nothing when it locks them."""
    try:
        text = log.read_text(errors="replace") if log.is_file() else ""
    except OSError:
        text = ""
    if UNLOCKED_CLOCKS in text:
        return f"none (ncu.log: '{UNLOCKED_CLOCKS}')"
    return "unknown (not in the capture)"


def measured_sm_clock(capture: Capture) -> str:
    """'SM clock measured during the profiled launches: 1.96-1.98 GHz (...)', or '' when absent."""
    m = capture.metrics
    vals = m.loc[m["metric"] == "sm__cycles_elapsed.avg.per_second", "value"].dropna()
    if vals.empty:
        return ""
    lo, hi = vals.min() / 1e9, vals.max() / 1e9
    span = f"{lo:.2f} GHz" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f} GHz"
    return f"SM clock measured during the profiled launches: {span} (sm__cycles_elapsed.avg.per_second)."


# ---------------------------------------------------------------------------------------------
# Per-stage annotations


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
