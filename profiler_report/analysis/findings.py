"""Nsight Compute guided-analysis findings that appear or vanish between stages."""

from __future__ import annotations

import pandas as pd

from profiler_report.capture.model import Capture


def rule_changes(capture: Capture, stages: pd.DataFrame) -> pd.DataFrame:
    """Which ncu rule findings (warnings/optimizations, by rule and title) appear or vanish per stage.

    Columns: stage, previous, change ("appears"|"vanishes"), rule, title, speedup_pct.
    """
    rules = capture.rules
    if rules.empty:
        return pd.DataFrame(columns=["stage", "previous", "change", "rule", "title", "speedup_pct"])
    only = stages[stages["role"] == "stage"].reset_index(drop=True)
    findings = rules[rules["type"].isin(["warning", "optimization", "error"])]

    def keyset(launch_id: int) -> dict[tuple[str, str], float]:
        sub = findings[findings["launch_id"] == launch_id]
        return {(r.rule, r.title): r.speedup_pct for r in sub.itertuples()}

    rows = []
    for i in range(1, len(only)):
        a, b = only.iloc[i - 1], only.iloc[i]
        ka, kb = keyset(a["launch_id"]), keyset(b["launch_id"])
        for key in sorted(kb.keys() - ka.keys()):
            rows.append({"stage": b["stage"], "previous": a["stage"], "change": "appears", "rule": key[0],
                         "title": key[1], "speedup_pct": kb[key]})
        for key in sorted(ka.keys() - kb.keys()):
            rows.append({"stage": b["stage"], "previous": a["stage"], "change": "vanishes", "rule": key[0],
                         "title": key[1], "speedup_pct": ka[key]})
    return pd.DataFrame(rows, columns=["stage", "previous", "change", "rule", "title", "speedup_pct"])
