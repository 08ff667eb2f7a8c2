"""The bank map: a shared tile drawn as a grid of 4-byte words coloured by their bank, one warp's
access outlined on it, and the lanes per bank counted at the side; several tiles side by side
(the unpadded ``[32][32]`` and the padded ``[32][33]``). :func:`bank_map_data` is what is
plotted (the tests check it); :func:`draw_bank_maps` draws it (matplotlib, Agg).

A tile spec is one entry of :meth:`~profiler_report.model.base.Case.bank_maps`: ``stage``,
``title``, ``banks`` (per lane the banks it touches), ``words`` (per lane its word addresses),
``pitch_words`` (4-byte words per tile row), ``rows`` (tile rows), ``wavefronts``, ``ideal``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiler_report.report.charts import ChartJob, _svg, pyplot

#: Banks of shared memory (every GPU since Maxwell): the word at address w is in bank w % 32.
BANKS = 32


@dataclass(frozen=True)
class BankMapData:
    """One tile as plotted: ``bank[r][c]`` of each word (row r, word c of the row), the cells the
    warp reads (row, word) in lane order, the distinct lanes per bank (32 counts), the title
    lines and the predicted and measured wavefronts per instruction (NaN: not measured)."""

    bank: tuple[tuple[int, ...], ...]
    read: tuple[tuple[int, int], ...]
    lanes_per_bank: tuple[int, ...]
    title: str
    wavefronts: int
    ideal: int
    measured: float


def bank_map_data(spec: dict[str, Any], measured: float = math.nan) -> BankMapData:
    """The plotted data of one tile spec (see the module docstring)."""
    pitch, rows = int(spec["pitch_words"]), int(spec["rows"])
    bank = tuple(tuple((r * pitch + c) % BANKS for c in range(pitch)) for r in range(rows))
    read = tuple((w // pitch, w % pitch) for lane in spec["words"] for w in lane)
    lanes: list[set[int]] = [set() for _ in range(BANKS)]
    for lane, banks in enumerate(spec["banks"]):
        for b in banks:
            lanes[b].add(lane)
    return BankMapData(bank, read, tuple(len(s) for s in lanes), str(spec["title"]), int(spec["wavefronts"]),
                       int(spec["ideal"]), float(measured))


def _panel(fig: Any, grid: Any, data: BankMapData) -> None:
    """One tile (left) and its lanes per bank (right) in ``grid`` (a GridSpec cell)."""
    import numpy as np
    from matplotlib.patches import Rectangle

    cmap = pyplot().get_cmap("hsv", BANKS)
    inner = grid.subgridspec(1, 2, width_ratios=[len(data.bank[0]), 3], wspace=0.05)
    ax, side = fig.add_subplot(inner[0]), fig.add_subplot(inner[1])
    ax.imshow(np.array(data.bank), cmap=cmap, vmin=-0.5, vmax=BANKS - 0.5, aspect="equal",
              interpolation="nearest", alpha=0.55)
    for r, c in data.read:
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.4))
    ax.set_xticks(range(0, len(data.bank[0]), 8))
    ax.set_yticks(range(0, len(data.bank), 8))
    ax.tick_params(labelsize=6, length=2)
    ax.set_xlabel("4-byte word of the tile row (colour: its bank)", fontsize=7)
    ax.set_ylabel("tile row", fontsize=7)
    shown = "not measured" if math.isnan(data.measured) else f"{data.measured:.2f}"
    ax.set_title(f"{data.title}\npredicted {data.wavefronts} wavefront(s) per instruction (ideal {data.ideal}); "
                 f"measured {shown}", fontsize=7)
    # The lanes per bank: one cell per bank in its colour (white: no lane there), the count in it.
    counts = data.lanes_per_bank
    strip = np.array([[b if n else np.nan] for b, n in enumerate(counts)])
    side.imshow(np.ma.masked_invalid(strip), cmap=cmap, vmin=-0.5, vmax=BANKS - 0.5, aspect="auto",
                interpolation="nearest", alpha=0.55)
    for b, n in enumerate(counts):
        side.text(0, b, str(n), ha="center", va="center", fontsize=5.5, fontweight="bold" if n > 1 else "normal")
    side.set_xticks([])
    side.yaxis.tick_right()
    side.set_yticks(range(0, BANKS, 8))
    side.tick_params(labelsize=6, length=2)
    side.set_xlabel("lanes\nper bank", fontsize=6)
    side.yaxis.set_label_position("right")
    side.set_ylabel("bank", fontsize=6)


def draw_bank_maps(specs: list[dict[str, Any]], measured: list[float]) -> str:
    """The tiles of ``specs`` side by side, each with its measured shared wavefronts per load
    (``measured``, NaN when not measured), the warp's read outlined. Returns SVG text."""
    plt = pyplot()
    fig = plt.figure(figsize=(4.3 * len(specs), 3.6))
    grid = fig.add_gridspec(1, len(specs), left=0.06, right=0.98, top=0.84, bottom=0.12, wspace=0.3)
    for i, (spec, value) in enumerate(zip(specs, measured, strict=True)):
        _panel(fig, grid[i], bank_map_data(spec, value))
    return _svg(fig)


def bank_map_jobs(case: Any, summary: pd.DataFrame, dtype: str) -> dict[str, ChartJob]:
    """Chart jobs (``bankmap:<stage>``) of the case's bank maps (:meth:`Case.bank_maps`): each
    stage's tile beside the tile of the map before it (the unpadded beside the padded), each
    with its stage's measured shared wavefronts per load beside the prediction."""
    if case is None:
        return {}
    rows = {str(r["stage"]): r for _, r in summary.iterrows()}
    maps = [m for m in case.bank_maps(dtype) if m["stage"] in rows]
    jobs: dict[str, ChartJob] = {}
    for i, m in enumerate(maps):
        shown = maps[max(0, i - 1):i + 1]
        measured = [float(rows[x["stage"]].get("shared_wavefronts_per_load", math.nan)) for x in shown]
        jobs[f"bankmap:{m['stage']}"] = (draw_bank_maps, (shown, measured))
    return jobs
