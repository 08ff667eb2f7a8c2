"""The sweeps judged: the block-shape sweep and the size x dtype sweep (sweep.json rows) as
tables, and what they say in words (where a peer still wins, where the best stage falls short of
its ceiling, whether the chosen shape is the fastest)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from profiler_report.analysis.ceilings import point_ceiling
from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.util.dtypes import ITEMSIZE


def shape_table(sweep: list[dict[str, Any]]) -> pd.DataFrame:
    """The block-shape sweep (sweep.json rows of kind "shape") as a table: dtype, size, shape
    ([micro-block rows, cols, threads]), tile, threads, per_thread, gbps, pct_of_memcpy, p10_us,
    p90_us, median_us, chosen (the shape the report profiles), fastest (the fastest at its size)."""
    frame = pd.DataFrame([r for r in sweep if r.get("kind") == "shape"])
    if frame.empty or not {"gbps", "rows", "cols"} <= set(frame.columns):  # `size`-only rows: no shapes
        return pd.DataFrame()
    frame = frame[frame["gbps"].notna()].copy()
    if frame.empty:
        return frame
    frame["size"] = frame["rows"].astype(str) + "x" + frame["cols"].astype(str)
    frame["shape"] = frame["name"].str.extract(r"(\[[^\]]*\])", expand=False).fillna(frame["name"])
    for col, default in (("tile", ""), ("threads", 0), ("per_thread", 0), ("chosen", False)):
        if col not in frame:
            frame[col] = default
    fastest = frame.groupby(["dtype", "size"], sort=False)["gbps"].transform("max")
    frame["fastest"] = frame["gbps"] == fastest
    cols = ["dtype", "size", "shape", "tile", "threads", "per_thread", "gbps", "pct_of_memcpy", "median_us",
            "p10_us", "p90_us", "chosen", "fastest"]
    return frame[cols].reset_index(drop=True)


def shape_verdicts(shapes: pd.DataFrame) -> list[str]:
    """One sentence per size and dtype: the fastest shape, and whether the chosen (profiled) shape
    is slower than it beyond the run-to-run spread (chosen's p10 above the fastest's p90)."""
    out = []
    for (dtype, size), grp in shapes.groupby(["dtype", "size"], sort=False):
        best = grp.loc[[grp["gbps"].idxmax()]].iloc[0]  # the fastest row
        chosen = grp[grp["chosen"].astype(bool)]
        text = f"{size} {dtype}: fastest {best['shape']} at {best['pct_of_memcpy']:.1f}% of memcpy"
        if chosen.empty:
            text += "; the chosen shape was not swept"
        else:
            c = chosen.iloc[0]
            if c["shape"] == best["shape"]:
                text += ", the chosen shape"
            elif slower_beyond_spread(c["p10_us"], best["p90_us"]):
                text += (f"; the chosen {c['shape']} ({c['pct_of_memcpy']:.1f}%) is slower beyond the spread: "
                         "change `template` in kernels/<case>/stages.toml")
            else:
                text += f"; the chosen {c['shape']} ({c['pct_of_memcpy']:.1f}%) is within the spread of it"
        out.append(text)
    return out


def sweep_table(sweep: list[dict[str, Any]]) -> pd.DataFrame:
    """Sweep rows as a table, one row per dtype and size, sorted by dtype and bytes moved.

    Columns: dtype, size, rows, cols, where (``resident``: L2|DRAM), ``best_stage`` (the fastest
    stage row; attempts with other build options, named "... [option]", aside) and its ``config``
    (the configuration the sweep chose there, "" for fixed stages), gbps, pct_of_memcpy,
    ``ceiling`` (what the point is judged against: "memcpy" at DRAM points, "L2 ceiling: <copy>"
    at L2-resident ones; files without it: memcpy) and ``pct_of_ceiling``; where peers ran, the
    fastest peer (``best_peer``, ``peer_gbps``, ``peer_pct_of_ceiling``) and ``vs_peer`` = best
    stage GB/s / fastest peer GB/s; NaN / "" where no peer ran. p10/p90 of both (us) for the
    spread rule, the fastest peer's ``peer_note`` (bench's "SUSPECT: faster than memcpy ..."), and
    ``copy_pct_of_memcpy``: the fastest copy kernel's % of memcpy at the point (NaN without one)."""
    frame = pd.DataFrame(sweep)
    if frame.empty or "rows" not in frame or "cols" not in frame:  # a case whose rows give only `size`
        return pd.DataFrame()
    frame["size"] = frame["rows"].astype(str) + "x" + frame["cols"].astype(str)
    frame = frame[frame["name"].map(lambda n: "[" not in n)]  # attempts and configurations aside
    frame["config"] = frame["config"].fillna("") if "config" in frame else ""
    if "ceiling" not in frame or "pct_of_point_ceiling" not in frame:  # recorded before rows carried
        frame = _with_ceiling(frame)  # their ceiling: the same rule here
    frame["pct_of_ceiling"] = frame["pct_of_point_ceiling"]
    timed = frame[frame["gbps"] > 0]  # NaN (untimed) and 0 (no time to divide by) aside
    if "note" in timed:
        timed = timed[~timed["note"].fillna("").astype(str).str.startswith("WRONG")]
    stages = timed[timed["kind"] == "stage"]
    best = stages.loc[stages.groupby(["dtype", "size"], sort=False)["gbps"].idxmax()]
    out = best[["dtype", "size", "rows", "cols", "resident", "name", "config", "gbps", "pct_of_memcpy", "ceiling",
                "pct_of_ceiling", "p10_us", "p90_us"]].copy()
    peers = timed[timed["kind"] == "peer"]
    top = peers.loc[peers.groupby(["dtype", "size"], sort=False)["gbps"].idxmax()] if len(peers) else peers
    top = top.assign(note=top["note"] if "note" in top else "")
    top = top[["dtype", "size", "name", "gbps", "pct_of_ceiling", "p10_us", "p90_us", "note"]].rename(
        columns={"name": "best_peer", "gbps": "peer_gbps", "pct_of_ceiling": "peer_pct_of_ceiling",
                 "p10_us": "peer_p10_us", "p90_us": "peer_p90_us", "note": "peer_note"})
    out = out.merge(top, on=["dtype", "size"], how="left")
    copies = timed[(timed["kind"] == "ceiling") & (timed["name"] != "memcpy")]
    out = out.merge(copies.groupby(["dtype", "size"])["pct_of_memcpy"].max().rename("copy_pct_of_memcpy"),
                    on=["dtype", "size"], how="left")
    out["best_peer"], out["peer_note"] = out["best_peer"].fillna(""), out["peer_note"].fillna("")
    out["vs_peer"] = out["gbps"] / out["peer_gbps"]
    itemsize = out["dtype"].map(ITEMSIZE)
    out["bytes_moved"] = 2 * out["rows"] * out["cols"] * itemsize
    out = out.sort_values(["dtype", "bytes_moved"], kind="stable")
    return out.rename(columns={"name": "best_stage"}).reset_index(drop=True)


def _with_ceiling(frame: pd.DataFrame) -> pd.DataFrame:
    """``ceiling`` and ``pct_of_point_ceiling`` per row, from its point's rows (point_ceiling)."""
    parts = []
    for _, grp in frame.groupby(["dtype", "size"], sort=False):
        found = point_ceiling([{str(k): v for k, v in r.items()} for r in grp.to_dict("records")])
        label, gbps = found if found else ("", float("nan"))
        parts.append(grp.assign(ceiling=label, pct_of_point_ceiling=100 * grp["gbps"] / gbps))
    return pd.concat(parts).loc[frame.index]


def stage_label(row: Any) -> str:
    """'vec_realigned [32,16,512]': a sweep_table row's best stage with the configuration it ran."""
    return f"{row['best_stage']} {row['config']}".strip()


def sweep_verdicts(frame: pd.DataFrame) -> list[str]:
    """What the sweep table says in words: how many points the best stage holds against the
    fastest peer, then one sentence per point where a peer is faster (by how much, and whether
    beyond the run-to-run spread: the peer's p90 below the stage's p10), then one per point whose
    fastest peer bench flagged as faster than memcpy (SUSPECT), then one per DRAM point where even
    the copy kernels stay below COPY_OUTLIER_PCT of memcpy (memcpy's figure there is not a ceiling a
    kernel reaches: the points just past the L2, in some sweeps), then where the best stage falls
    short of its ceiling at DRAM points (:func:`_short_of_ceiling`)."""
    judged = frame[frame["vs_peer"].notna()] if not frame.empty else frame
    if judged.empty:
        return []
    losing = judged[judged["vs_peer"] < 1]
    out = [f"the best stage is at or above the fastest peer at {len(judged) - len(losing)} of {len(judged)} "
           "sizes and dtypes where peers ran" + (f"; peers ran at {len(judged)} of {len(frame)}"
                                                 if len(judged) < len(frame) else "")]
    for _, r in losing.iterrows():
        spread = "beyond the spread" if slower_beyond_spread(r["p10_us"], r["peer_p90_us"]) else "within the spread"
        out.append(f"{r['size']} {r['dtype']} ({r['resident']}): {r['best_peer']} is faster than "
                   f"{stage_label(r)} by {100 * (1 / r['vs_peer'] - 1):.1f} % ({r['vs_peer']:.3f}x, {spread})")
    out += [f"{r['size']} {r['dtype']}: the fastest peer, {r['best_peer']}, is faster than memcpy beyond the spread "
            "at a DRAM size: its timing or output is suspect (bench's note)"
            for _, r in judged.iterrows() if "SUSPECT" in str(r["peer_note"])]
    return out + _copy_outliers(frame) + _short_of_ceiling(frame)


#: Below this % of memcpy for the fastest copy kernel at a DRAM point, memcpy is named as the outlier
#: (copies with 16 bytes in flight per thread reach 99-101 % of memcpy at the other DRAM points).
COPY_OUTLIER_PCT = 90.0


def _copy_outliers(frame: pd.DataFrame) -> list[str]:
    if "copy_pct_of_memcpy" not in frame:
        return []
    low = frame[(frame["resident"] == "DRAM") & (frame["copy_pct_of_memcpy"] > 0)
                & (frame["copy_pct_of_memcpy"] < COPY_OUTLIER_PCT) & frame["pct_of_memcpy"].notna()]
    return [f"{r['size']} {r['dtype']} (DRAM): even the copy kernels reach only {r['copy_pct_of_memcpy']:.1f} % of "
            f"memcpy there, so % of memcpy understates every stage; {stage_label(r)} is at "
            f"{100 * r['pct_of_memcpy'] / r['copy_pct_of_memcpy']:.1f} % of the fastest copy kernel"
            for _, r in low.iterrows()]


#: The sweep's bars for the best stage at a DRAM point, in % of its ceiling (memcpy of the same
#: size in the same process): the goal, and the floor no point should fall below.
CEILING_GOAL_PCT = 95.0
CEILING_FLOOR_PCT = 90.0


def _short_of_ceiling(frame: pd.DataFrame) -> list[str]:
    """The DRAM points whose best stage is below :data:`CEILING_FLOOR_PCT` of its ceiling, and
    those below :data:`CEILING_GOAL_PCT`, each with its figure; or that every one reaches the goal."""
    if frame.empty or "pct_of_ceiling" not in frame:
        return []
    dram = frame[(frame["resident"] == "DRAM") & frame["pct_of_ceiling"].notna()]
    if dram.empty:
        return []

    def points(sel: pd.DataFrame) -> str:
        return "; ".join(f"{r['size']} {r['dtype']} {r['pct_of_ceiling']:.1f} % ({stage_label(r)})"
                         for _, r in sel.sort_values("pct_of_ceiling").iterrows())
    below = dram[dram["pct_of_ceiling"] < CEILING_FLOOR_PCT]
    short = dram[(dram["pct_of_ceiling"] >= CEILING_FLOOR_PCT) & (dram["pct_of_ceiling"] < CEILING_GOAL_PCT)]
    out = []
    if len(below):
        out.append(f"the best stage is below {CEILING_FLOOR_PCT:g} % of its ceiling at {len(below)} of {len(dram)} "
                   f"DRAM points: {points(below)}")
    if len(short) and len(below):
        out.append(f"the best stage is below {CEILING_GOAL_PCT:g} % of its ceiling at {len(short)} more: "
                   f"{points(short)}")
    elif len(short):
        out.append(f"the best stage is at {CEILING_FLOOR_PCT:g} % of its ceiling or above at all {len(dram)} DRAM "
                   f"points, below {CEILING_GOAL_PCT:g} % at {len(short)}: {points(short)}")
    if not out:
        out.append(f"the best stage is at {CEILING_GOAL_PCT:g} % of its ceiling or above at all {len(dram)} "
                   "DRAM points")
    return out
