"""analysis.next_step: 000's order of diagnosis, per stage, from the numbers."""

from __future__ import annotations

import pandas as pd

from profiler_report.analysis.next_step import COALESCED_PCT, CONFLICT_SHARE, STALL_CYCLES, next_steps


def _row(stage, load=100.0, store=100.0, excessive=0.0, wavefronts=100.0, inst=1000.0, pct=50.0):
    return {"stage": stage, "role": "stage", "global_load_efficiency_pct": load, "global_store_efficiency_pct": store,
            "shared_excessive_wavefronts": excessive, "shared_load_wavefronts": wavefronts / 2,
            "shared_store_wavefronts": wavefronts / 2, "instructions_executed": inst, "pct_of_memcpy": pct}


def _stalls(**top):
    return pd.DataFrame([{"stage": s, "reason": "long_scoreboard", "cycles_per_issue": c} for s, c in top.items()],
                        columns=["stage", "reason", "cycles_per_issue"])


def test_the_order_is_coalescing_then_conflicts_then_stalls_then_instructions():
    summary = pd.DataFrame([_row("a", store=12.5, excessive=90), _row("b", excessive=90), _row("c"),
                            _row("d", inst=500)])
    lines = next_steps(summary, _stalls(a=30, b=30, c=STALL_CYCLES + 1, d=1))
    assert "coalescing" in lines["a"] and "b removes it" in lines["a"]  # coalescing first, though a conflicts too
    assert "bank conflicts" in lines["b"] and "c removes it" in lines["b"]
    assert "warp stalls" in lines["c"] and "d removes it" in lines["c"]
    assert "instruction count" in lines["d"] and "no later stage of the ladder cuts it" in lines["d"]


def test_thresholds_are_strict_bounds():
    summary = pd.DataFrame([_row("a", store=COALESCED_PCT, excessive=CONFLICT_SHARE * 100)])
    line = next_steps(summary, _stalls(a=STALL_CYCLES))["a"]
    assert "instruction count" in line  # each value exactly at its threshold does not count as the limit


def test_no_later_stage_and_the_copy_ceiling_are_said():
    summary = pd.DataFrame([_row("a"), _row("b", pct=97.3)])
    lines = next_steps(summary, _stalls(a=20, b=25))
    assert "no later stage of the ladder removes it" in lines["a"]
    assert "at 97.3% of memcpy" in lines["b"] and "copy ceiling" in lines["b"]
    assert "copy ceiling" not in lines["a"]


def test_ceiling_rows_are_not_stages():
    summary = pd.DataFrame([_row("a"), {**_row("copy"), "role": "ceiling"}])
    assert list(next_steps(summary, _stalls(a=1))) == ["a"]


def test_a_capture_without_counters_says_so():
    nan = float("nan")
    summary = pd.DataFrame([_row("a", load=nan, store=nan, excessive=nan, wavefronts=nan, inst=nan)])
    assert "Not enough counters" in next_steps(summary, _stalls())["a"]


def test_the_committed_h200_ladder_reads_as_the_articles_say(good_run):
    lines = next_steps(good_run.summary, good_run.analysis.stalls)
    assert "coalescing" in lines["naive"] and "smem removes it" in lines["naive"]
    assert "bank conflicts" in lines["smem"] and "padded removes it" in lines["smem"]
    assert "warp stalls" in lines["padded"]
    assert "bank conflicts" in lines["vec_padded"] and "vec_swizzled removes it" in lines["vec_padded"]
