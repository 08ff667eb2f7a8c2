"""annotate and degraded: what the report says about time sources, clocks, block/tile shapes,
conflict sides, and counters that could not be collected.

Timings used by the counter-less tests are test values written into tmp_path by the tests
themselves (GPU named "TEST DOUBLE"), never measurements.
"""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
from conftest import F32

from profiler_report.cases.transpose.notes import block_shape_warning
from profiler_report.report.annotate import conflict_context
from profiler_report.report.build import render_timings_only
from profiler_report.report.counterless import unavailable_reason
from profiler_report.report.notes import page_notes, time_source_note


def test_locked_clocks_are_said():
    assert "locked to base" in time_source_note({"clock_control": "base"})
    assert "unlocked" in time_source_note({"clock_control": "none"})


def test_foreign_capture_clock_control_is_unknown_with_the_measured_clock(f32_capture):
    note = time_source_note({"clock_control": "unknown (not in the capture)"}, f32_capture)
    assert "unknown (not in the capture)" in note
    assert "GHz (sm__cycles_elapsed.avg.per_second)" in note


def test_clock_control_from_the_ncu_log_beside_the_capture(tmp_path):
    from profiler_report.report.notes import clock_control_from_log

    assert clock_control_from_log(F32 / "ncu.log").startswith("none (ncu.log:")
    assert clock_control_from_log(tmp_path / "ncu.log") == "unknown (not in the capture)"


def test_rendered_foreign_capture_names_clock_control_unknown(tmp_path):
    from profiler_report.report.build import render_capture

    capture = tmp_path / "capture.ncu-rep"  # alone, without the ncu.log that sits beside the fixture
    capture.write_bytes((F32 / "profile.ncu-rep").read_bytes())
    render_capture(capture, tmp_path / "out", labels=[("a", "transpose_smem"), ("b", "vec_padded")])
    html = (tmp_path / "out" / "index.html").read_text()
    assert "clock control</th>" not in html  # one row says what the capture cannot, not a row of unknowns
    assert re.search(r"not in the capture</th><td>[^<]*clock control", html)
    assert "the conflicts sit on the store side" in html  # vec_padded
    # vec_padded's conflicts come from its 16-byte stores; its 1-D block is no clue, so no block warning.
    assert "block x-size is 256" not in html


def test_block_shape_warning_only_for_2d_blocks_not_32_wide():
    import pandas as pd

    from profiler_report.cases.transpose.notes import block_shape_warning

    row = {"block": "(16, 16, 1)", "shared_excessive_wavefronts": 1_000_000.0}
    assert "block x-size is 16, not 32" in block_shape_warning(pd.Series(row), "tile[32][33]")
    assert block_shape_warning(pd.Series({**row, "block": "(32, 8, 1)"}), "tile[32][33]") == ""
    assert block_shape_warning(pd.Series({**row, "block": "(256, 1, 1)"}), "tile") == ""
    assert block_shape_warning(pd.Series({**row, "shared_excessive_wavefronts": 0.0}), "tile") == ""


def test_block_shape_warning_only_when_block_x_is_not_32_and_conflicts_exist():
    row = pd.Series({"block": "(64, 4, 1)", "shared_excessive_wavefronts": 1000.0})
    assert "block x-size is 64, not 32" in block_shape_warning(row, "shared tile `T tile[32][33]`")
    assert block_shape_warning(pd.Series({"block": "(32, 8, 1)", "shared_excessive_wavefronts": 1e6}), "") == ""
    assert block_shape_warning(pd.Series({"block": "(64, 4, 1)", "shared_excessive_wavefronts": 0.0}), "") == ""
    assert block_shape_warning(pd.Series({"block": "(64, 4, 1)", "shared_excessive_wavefronts": math.nan}), "") == ""


def test_conflict_context_names_block_tile_and_side():
    row = pd.Series({"block": "(32, 8, 1)", "grid": "(2, 2, 1)", "shared_excessive_wavefronts": 10.0,
                     "shared_excessive_source": "ncu", "shared_excessive_wavefronts_ld": 10.0,
                     "shared_excessive_wavefronts_st": 0.0})
    text = conflict_context(row, "shared tile `T tile[TILE][TILE]` (TILE = 32)")
    assert "block (32, 8, 1)" in text and "tile[TILE][TILE]" in text and "load side" in text
    computed = row.copy()
    computed["shared_excessive_source"] = "computed"
    assert "computed" in conflict_context(computed, "")
    absent = row.copy()
    absent["shared_excessive_source"] = "not collected"
    absent["shared_excessive_wavefronts"] = math.nan
    assert "not collected" in conflict_context(absent, "")


def test_capture_notes_reach_the_page(tmp_path):
    from profiler_report.capture.csv_raw import read_csv

    cap = read_csv(F32.parent / "bad" / "two_processes.csv")
    notes = page_notes({}, cap)
    assert any("2 processes" in n for n in notes)


# --------------------------------------------------------------------------------------------
# Counter-less report (run --no-counters)


def _write_sidecars(folder, counters: str) -> None:
    """Sidecar files as a counter-less run writes them, with TEST values (not measurements)."""
    folder.mkdir(parents=True, exist_ok=True)
    prov = {"mode": "live", "gpu": "TEST DOUBLE (no GPU)", "rows": 64, "cols": 64, "dtype": "float32",
            "counters": counters, "clock_control": "n/a (no profiler)", "section_set": "none (--no-counters)"}
    stages = ["naive", "smem", "padded", "copy"]
    validation = [{"stage": s, "rows": 64, "cols": 64, "dtype": "float32", "correct": True, "mismatches": 0,
                   "first_wrong": None, "message": ""} for s in stages]
    timings = [{"name": n, "rows": 64, "cols": 64, "dtype": "float32", "repeats": 30, "median_us": us,
                "p10_us": us, "p90_us": us, "min_us": us, "gbps": 32768 / (us * 1e3), "source": "test value"}
               for n, us in (("memcpy", 5.0), ("naive", 20.0), ("smem", 10.0), ("padded", 8.0), ("copy", 6.0))]
    (folder / "provenance.json").write_text(json.dumps(prov))
    (folder / "validation.json").write_text(json.dumps(validation))
    (folder / "timings.json").write_text(json.dumps({"provenance": prov, "timings": timings}))


@pytest.mark.parametrize("counters, label", [("unavailable (permission)", "unavailable (permission)"),
                                             ("unavailable (--no-counters)", "unavailable (--no-counters)")])
def test_counter_less_report_marks_every_counter(tmp_path, counters, label):
    _write_sidecars(tmp_path, counters)
    analysis, files = render_timings_only(tmp_path)
    assert [f.name for f in files] == ["index.html", "summary.csv", "summary.json"]
    html = (tmp_path / "index.html").read_text()
    assert label in html and "not measured" not in html.split('id="summary"')[1].split("</table>")[0]
    summary = analysis.summary.set_index("stage")
    assert summary.loc["smem", "event_median_us"] == 10.0
    assert math.isnan(summary.loc["smem", "duration_us"])
    assert summary.loc["copy", "role"] == "ceiling"
    assert summary.loc["smem", "block"] == "(32, 8, 1)" and summary.loc["smem", "grid"] == "(2, 2, 1)"
    assert "2.00x faster than naive" in analysis.verdicts["smem"]


def test_unavailable_reason():
    assert unavailable_reason({"counters": "unavailable (permission)"}) == "permission"
    assert unavailable_reason({}) == "--no-counters"


def test_counter_less_report_needs_its_files(tmp_path):
    from profiler_report.errors import InputError

    with pytest.raises(InputError, match="neither validation.json nor timings.json"):
        render_timings_only(tmp_path)


# --------------------------------------------------------------------------------------------
# Metric traps and time sources


def test_no_verdict_or_expectation_rests_on_the_raw_bank_conflict_counters(manifest):
    from profiler_report.analysis.verdicts import _VERDICT_METRICS

    raw = {"bank_conflicts_ld_raw", "bank_conflicts_st_raw"}
    assert not raw & {m for m, _, _ in _VERDICT_METRICS}
    assert not raw & {e.metric for s in manifest.stages for e in s.expect}


def test_every_time_names_its_source():
    from profiler_report.metrics import HEADLINE, TIMING_COLUMNS

    for col in (*HEADLINE, *TIMING_COLUMNS):
        if col.unit == "us":
            assert "ncu" in col.label or "event" in col.label, col.label


def test_absent_derived_metric_is_computed_and_labelled(tmp_path):
    from profiler_report.report.build import render_capture

    render_capture(F32.parent / "bad" / "missing_cells.csv", tmp_path)
    html = (tmp_path / "index.html").read_text()
    assert "[computed: the derived metric was not in the capture]" in html
    assert "(computed: wavefronts minus ideal)" in html
