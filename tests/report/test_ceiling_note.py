"""A stage that outruns its own ceiling kernel is called out on its section of the page."""

from __future__ import annotations

from pathlib import Path

from conftest import load_run_once

ROOT = Path(__file__).resolve().parents[2]
HISTOGRAM = ROOT / "examples" / "histogram"
HIST_CAPTURE = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"


# --------------------------------------------------------------------------------------------
# A stage faster than its ceiling is called out on its section


def test_a_stage_above_its_ceiling_gets_a_note():
    from profiler_report.analysis.ceilings import outruns_ceiling_note

    assert outruns_ceiling_note(float("nan"), "copy") == "" and outruns_ceiling_note(None, "copy") == ""
    assert outruns_ceiling_note(104.9, "copy") == ""  # within the timings' spread
    assert "159% of its ceiling kernel `copy`" in outruns_ceiling_note(159.4, "copy")


def test_the_page_notes_a_stage_above_its_ceiling():
    # The real histogram capture and timings; one stage's pct_of_copy_kernel set to what the
    # scaffold's 4-byte ceiling gave its 16-byte stage on the H200 (159 %): a unit test of the page.
    from dataclasses import replace

    from profiler_report.report.build import _inputs
    from profiler_report.report.page import build_page

    run = load_run_once(HIST_CAPTURE)
    page = build_page(_inputs(run, False, None))
    assert not any("of its ceiling kernel" in n for s in page.stages for n in s.warnings)  # 68 % at most
    summary = run.summary.copy()
    summary.loc[summary["stage"] == "warp_private_vec", "pct_of_copy_kernel"] = 159.4
    page = build_page(replace(_inputs(run, False, None), analysis=replace(run.analysis, summary=summary)))
    notes = {s.id: [n for n in s.warnings if "of its ceiling kernel" in n] for s in page.stages}
    assert notes["warp_private_vec"] and "159%" in notes["warp_private_vec"][0]
    assert not any(notes[s] for s in notes if s != "warp_private_vec")
