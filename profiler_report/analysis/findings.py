"""Nsight Compute guided-analysis findings that appear or vanish between stages."""

from __future__ import annotations

import math

import pandas as pd

from profiler_report.capture.model import Capture
from profiler_report.util.fmt import fmt
from profiler_report.util.frames import tuples


def rule_changes(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Which ncu rule findings (warnings/optimizations, by rule and title) appear or vanish per stage.

    Columns: stage, previous, change ("appears"|"vanishes"), rule, title, speedup_pct.
    """
    rules = capture.rules
    if rules.empty:
        return pd.DataFrame(columns=["stage", "previous", "change", "rule", "title", "speedup_pct"])
    only = stages[stages["role"] == "stage"]
    ids = {s: list(only.loc[only["stage"] == s, "launch_id"]) for s in dict.fromkeys(only["stage"])}
    only = only.drop_duplicates("stage").reset_index(drop=True)  # a stage of several launches: all of them
    findings = rules[rules["type"].isin(["warning", "optimization", "error"])]

    def keyset(stage: str) -> dict[tuple[str, str], float]:
        sub = findings[findings["launch_id"].isin(ids[stage])]
        return {(r.rule, r.title): r.speedup_pct for r in tuples(sub)}

    rows = []
    for i in range(1, len(only)):
        a, b = only.iloc[i - 1], only.iloc[i]
        ka, kb = keyset(a["stage"]), keyset(b["stage"])
        for key in sorted(kb.keys() - ka.keys()):
            rows.append({"stage": b["stage"], "previous": a["stage"], "change": "appears", "rule": key[0],
                         "title": key[1], "speedup_pct": kb[key]})
        for key in sorted(ka.keys() - kb.keys()):
            rows.append({"stage": b["stage"], "previous": a["stage"], "change": "vanishes", "rule": key[0],
                         "title": key[1], "speedup_pct": ka[key]})
    return pd.DataFrame(rows, columns=["stage", "previous", "change", "rule", "title", "speedup_pct"])


def rule_disagreement(rule: str, title: str, row: pd.Series) -> str:
    """One line where ncu's rule text disagrees with the tool's verdict, else "".

    ncu's SharedMemoryConflicts rule ("Shared Load Bank Conflicts ... N bank conflicts") reads
    the raw counter ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st.sum``, which also
    counts cycles a wavefront waits for other reasons; the tool judges conflicts by excessive
    wavefronts (``derived__memory_l1_wavefronts_shared_excessive``). Said where the stage's
    excessive wavefronts on that side are 0.
    """
    if rule != "SharedMemoryConflicts":
        return ""
    side = "st" if "Store" in title else "ld"
    excessive = row.get(f"shared_excessive_wavefronts_{side}", math.nan)
    if pd.isna(excessive):
        excessive = row.get("shared_excessive_wavefronts", math.nan)
    if pd.isna(excessive) or float(excessive) != 0:
        return ""
    raw = row.get(f"bank_conflicts_{side}_raw", math.nan)
    raw_text = f" ({fmt(raw)} here)" if not pd.isna(raw) else ""
    which = "store" if side == "st" else "load"
    return (f"Not a contradiction of the verdict: ncu's rule reads the raw counter "
            f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{side}.sum{raw_text}, which counts more than "
            f"the excessive wavefronts; those (the verdict's measure) are 0 on the {which} side.")
