"""What a reader meets first (report/headline.py), the stall charts' one scale, source diffs
without comment churn, and ncu's rule text beside a verdict it seems to contradict."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from profiler_report.analysis.findings import rule_disagreement
from profiler_report.report.charts import draw_stalls, stall_axis_max, stall_chart_data
from profiler_report.report.headline import headline, peers_run_note
from profiler_report.report.page import code_diff, code_lines

LIVE = Path(__file__).resolve().parents[2] / "reports" / "h200"


@pytest.fixture(scope="module")
def live_summary() -> pd.DataFrame:
    return pd.DataFrame(json.loads((LIVE / "summary.json").read_text())["stages"])


def test_headline_is_the_ladder_in_one_sentence(live_summary):
    text = headline(live_summary)
    stages = live_summary[live_summary["role"] == "stage"]
    first, last = stages.iloc[0], stages.iloc[-1]
    assert text.startswith(f"{len(stages)} stages take the kernel from {first['event_gbps']:,.0f} GB/s "
                           f"({first['stage']}"), text
    assert f"{last['event_gbps']:,.0f} GB/s ({last['stage']}" in text
    assert f"{last['event_gbps'] / first['event_gbps']:.2f}x" in text and "timings.json" in text


def test_headline_claims_nothing_for_a_wrong_stage(live_summary):
    last = live_summary[live_summary["role"] == "stage"].iloc[-1]["stage"]
    assert f"({last}," not in headline(live_summary, frozenset({last}))
    assert headline(live_summary.iloc[:1]) == ""


def test_peers_note_names_both_runs_and_the_largest_gap(live_summary):
    bench = json.loads((LIVE / "bench.json").read_text())["rows"]
    note = peers_run_note(live_summary, bench)
    ours = dict(zip(live_summary["stage"], live_summary["event_gbps"], strict=True))
    gaps = {r["name"]: abs(r["gbps"] / ours[r["name"]] - 1) for r in bench
            if r["kind"] in ("stage", "ceiling") and r["name"] in ours}
    worst = max(gaps, key=gaps.get)
    assert "bench.json" in note and "timings.json" in note and f"{worst}:" in note
    assert f"{gaps[worst]:.1%}" in note
    assert peers_run_note(live_summary, []) == ""


def test_stall_charts_share_one_value_axis():
    stalls = pd.DataFrame({"stage": ["a", "a", "b"], "reason": ["long_scoreboard", "barrier", "barrier"],
                           "cycles_per_issue": [200.0, 3.0, 20.0]})
    top = stall_axis_max(stalls)
    assert top == pytest.approx(220.0)
    svgs = [draw_stalls(stall_chart_data(stalls, s), s, top) for s in ("a", "b")]
    # The x tick labels: both charts run to the same limit (200 is a tick on each).
    ticks = [re.findall(r">(\d+)</text>", svg) for svg in svgs]
    assert ticks[0] and ticks[0] == ticks[1], ticks
    assert stall_axis_max(stalls.iloc[:0]) == 0.0


def test_comment_only_changes_are_left_out_of_the_diff():
    old = "int x = 1;  // one\n// a note\nint y = 2;\n\nreturn x;\n"
    new = "int x = 1;  // changed\n// another note\nint y = 2;\n\nreturn x;\n"
    assert code_lines(old) == ["int x = 1;", "", "int y = 2;", "", "return x;"]
    assert code_diff(old, new, "a", "b") == ("", 2)
    changed = new.replace("return x;", "return y;")
    diff, hidden = code_diff(old, changed, "a", "b")
    # Lines 2-4 are the hunk's context (shown); line 1's comment change lies outside it: left out.
    assert "-return x;" in diff and "+return y;" in diff and "// another note" in diff and hidden == 1
    assert code_lines("a; /* x\n y */ b;") == ["a;", "b;"]


def test_ncu_bank_conflict_text_is_explained_where_the_verdict_says_conflict_free():
    row = pd.Series({"shared_excessive_wavefronts": 0.0, "shared_excessive_wavefronts_ld": 0.0,
                     "shared_excessive_wavefronts_st": 0.0, "bank_conflicts_ld_raw": 247831.0})
    why = rule_disagreement("SharedMemoryConflicts", "Shared Load Bank Conflicts", row)
    assert "raw counter" in why and "247,831" in why and "load side" in why
    conflicting = row.copy()
    conflicting["shared_excessive_wavefronts_ld"] = 6.0
    assert rule_disagreement("SharedMemoryConflicts", "Shared Load Bank Conflicts", conflicting) == ""
    assert rule_disagreement("UncoalescedGlobalAccess", "Uncoalesced", row) == ""
    assert rule_disagreement("SharedMemoryConflicts", "Shared Load Bank Conflicts",
                             pd.Series({"shared_excessive_wavefronts": math.nan})) == ""
