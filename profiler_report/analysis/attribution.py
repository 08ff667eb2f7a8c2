"""Per-instruction attribution of a launch: where in the code the stage's figures come from.

The table ranks by what the stage is about (:func:`ranking`): excessive shared wavefronts
(``derived__memory_l1_wavefronts_shared_excessive`` by PC) where the kernel accesses shared
memory; else excessive global sectors (``derived__memory_l2_theoretical_sectors_global_excessive``
by PC) where global accesses are uncoalesced; else the warp-stall samples
(``smsp__pcsamp_warps_issue_stalled_*`` by PC); else the instructions executed. With line
information the instructions of one CUDA source line are one row: plain counters summed (never
ratios), the opcodes listed.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from profiler_report.capture.model import Capture
from profiler_report.util.fmt import fmt

#: Rows of the per-instruction table per stage.
ATTRIBUTION_ROWS = 8


NO_LINEINFO = "built without -lineinfo: attributed to SASS (the capture has no CUDA source lines for this kernel)"

#: Ranking -> (the column it ranks by, what the note says is shown).
RANKINGS = {
    "shared": ("shared_excessive_wavefronts", "shared-memory instructions, the most excessive shared wavefronts "
               "(derived__memory_l1_wavefronts_shared_excessive) first"),
    "global": ("global_excessive_sectors", "global-memory instructions, the most excessive L2 sectors "
               "(derived__memory_l2_theoretical_sectors_global_excessive: uncoalesced accesses) first"),
    "stalls": ("stall_samples", "the instructions with the most warp-stall samples "
               "(smsp__pcsamp_warps_issue_stalled_*, PC sampling) first"),
    "executed": ("inst_executed", "the most executed instructions"),
}

_COUNTERS = ("inst_executed", "shared_wavefronts", "shared_ideal_wavefronts", "shared_excessive_wavefronts",
             "global_sectors", "global_ideal_sectors", "global_excessive_sectors", "stall_samples")


def _short_file(path: str) -> str:
    """File name for the location column; NVRTC's hashed in-memory name reads 'NVRTC source'."""
    base = os.path.basename(path)
    return "NVRTC source" if base.endswith(".cubin.cu") and len(base) > 40 else base


def ranking(sub: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """(ranking name of :data:`RANKINGS`, the instructions it ranks) for one launch's rows."""
    shared = sub[sub["side"] != ""]
    if not shared.empty:
        return "shared", shared
    if "global_excessive_sectors" in sub and (sub["global_excessive_sectors"] > 0).any():
        return "global", sub[sub["global_sectors"].notna() | sub["global_excessive_sectors"].notna()]
    if "stall_samples" in sub and (sub["stall_samples"] > 0).any():
        return "stalls", sub[sub["stall_samples"] > 0]
    return "executed", sub


def by_line(pick: pd.DataFrame, key: str = "inst_executed") -> pd.DataFrame:
    """One row per CUDA source line (rows without a line stay one per instruction): counters
    summed, the instructions listed (the one highest in ``key`` first: a line's uncoalesced
    store before its coalesced load), the top stall reason of the line's most stalled one."""
    lined, loose = pick[pick["line"] > 0], pick[pick["line"] <= 0]
    if lined.empty:
        return pick
    rows = []
    for (file, line), grp in lined.groupby(["file", "line"], sort=False):
        grp = grp.sort_values([key, "pc_offset"], ascending=[False, True], na_position="last")
        stalled = grp["stall_samples"].fillna(0) if "stall_samples" in grp else pd.Series(0, index=grp.index)
        rows.append({
            "launch_id": grp["launch_id"].iloc[0], "pc_offset": int(grp["pc_offset"].min()), "file": file,
            "line": line, "sass": " / ".join(dict.fromkeys(grp["sass"])),
            "side": " / ".join(dict.fromkeys(s for s in grp["side"] if s)),
            **{c: grp[c].sum(min_count=1) for c in _COUNTERS if c in grp},
            "top_stall": grp["top_stall"].iloc[int(stalled.to_numpy().argmax())]  # the first most-stalled row
            if "top_stall" in grp and stalled.max() > 0 else "",
        })
    return pd.concat([pd.DataFrame(rows), loose], ignore_index=True)


def attribution(capture: Capture | None, launch_id: int, own_source: str | None) -> tuple[list[dict[str, Any]], str]:
    """(rows, note) of the per-instruction table of one launch, ranked by :func:`ranking`, at most
    ATTRIBUTION_ROWS, grouped by source line where the capture has line information.

    ``own_source`` is the text of the case's kernel source for the project's own stages (NVRTC
    compiles it as-is, so the capture's line numbers are lines of that file).
    """
    if capture is None or capture.source.empty:
        kind = "a CSV export" if capture is not None and capture.kind.startswith("csv") else "this capture"
        return [], f"No per-instruction values in {kind} (Source Counters): no attribution to source lines or SASS."
    sub = capture.source[capture.source["launch_id"] == launch_id]
    if sub.empty:
        return [], "No per-instruction values for this launch: no attribution to source lines or SASS."
    name, pool = ranking(sub)
    key, what = RANKINGS[name]
    has_lines = bool((sub["line"] > 0).any())
    pick = by_line(pool, key) if has_lines else pool
    pick = pick.sort_values([key, "pc_offset"], ascending=[False, True], na_position="last").head(ATTRIBUTION_ROWS)
    texts = {f: t for f, t in capture.source_files.items() if t}
    own_lines = own_source.splitlines() if own_source else []
    rows = [_row(r, texts, own_lines, name) for r in pick.itertuples()]
    if not has_lines:
        return rows, f"{NO_LINEINFO}. Showing {what}."
    what += ", one row per source line"
    files = sorted({f for f in sub["file"] if f})
    if all(f in texts for f in files):
        return rows, f"Showing {what}, with the source text the capture embeds."
    if own_lines:
        return rows, (f"Showing {what}. The capture has line numbers but not the source text (ncu could not import "
                      "the NVRTC in-memory file); NVRTC compiled the case's kernel source as-is, so the line text "
                      "shown is that file's, as it is now.")
    return rows, (f"Showing {what} by line number: the capture has line information but ncu could not import the "
                  f"source file ({', '.join(os.path.basename(f) for f in files)}), so no source text is shown.")


def _row(r: Any, texts: dict[str, str], own_lines: list[str], name: str) -> dict[str, Any]:
    line_text = ""
    if r.line > 0 and r.file in texts:
        line_text = _line(texts[r.file].splitlines(), r.line)
    elif r.line > 0 and own_lines:
        line_text = _line(own_lines, r.line)
    shared_fmt = fmt if r.side else (lambda _v: "-")
    get = r._asdict()
    stall = _or_dash(get.get("stall_samples"))
    return {
        "location": f"{_short_file(r.file)}:{r.line}" if r.line > 0 else f"SASS +0x{r.pc_offset:x}",
        "line_text": line_text, "sass": r.sass, "side": r.side or "-", "ranked_by": name,
        "inst_executed": fmt(r.inst_executed), "shared_wavefronts": shared_fmt(r.shared_wavefronts),
        "shared_ideal_wavefronts": shared_fmt(r.shared_ideal_wavefronts),
        "shared_excessive_wavefronts": shared_fmt(r.shared_excessive_wavefronts),
        "global_sectors": _or_dash(get.get("global_sectors")),
        "global_ideal_sectors": _or_dash(get.get("global_ideal_sectors")),
        "global_excessive_sectors": _or_dash(get.get("global_excessive_sectors")),
        "stall_samples": stall + (f" ({get['top_stall']})" if get.get("top_stall") else ""),
    }


def _or_dash(v: Any) -> str:
    """A per-instruction figure, '-' where the instruction has none (a shared access has no
    global sectors; an instruction never sampled has no stall samples)."""
    return "-" if v is None or pd.isna(v) else fmt(v)


def _line(lines: list[str], n: int) -> str:
    return lines[n - 1].strip() if 0 < n <= len(lines) else ""
