"""analysis.experiments, analysis.story and the padding sweep's table: experiments, claims, next
limits and bank maps on the page of the committed real H200 capture (tests/data/h200_f32_4096)."""

from __future__ import annotations

import math
import shutil

import pytest
from conftest import F32, read_once

from profiler_report.analysis.experiments import experiment_tables
from profiler_report.analysis.story import tell
from profiler_report.cases.transpose import padding_sweep as ps
from profiler_report.model.registry import get_case
from profiler_report.report.bank_map import bank_map_jobs
from profiler_report.report.charts import draw_here
from profiler_report.report.html import render_html
from profiler_report.report.page import PageInputs, build_page

CASE = get_case("transpose")


@pytest.fixture(scope="module")
def page(f32_analysis):
    story = tell(f32_analysis, CASE, experiments=tuple(experiment_tables(CASE, F32)))
    inp = PageInputs(f32_analysis, {"mode": "recorded capture", "dtype": "float32"}, story, CASE)
    return build_page(inp, lambda: draw_here(bank_map_jobs(CASE, f32_analysis.summary, "float32")))


def test_the_sweep_has_every_point_predicted_even_when_not_recorded(page):
    sweep = page.section("experiment-padding_sweep").table
    assert sweep.id == "padding_sweep" and not sweep.recorded
    assert len(sweep.rows) == 20 == len({(p.elem_bytes, p.bx, p.pad) for p in ps.POINTS})
    assert any("Not recorded" in n for n in sweep.notes)
    by_point = {r.point: r.cells for r in sweep.rows}
    assert by_point["f32_bx32_pad0"][3:5] == ["32-way", "32"]
    assert by_point["f32_bx32_pad1"][3:5] == ["conflict-free", "1"]
    assert by_point["f64_bx32_pad0"][4] == "32" and by_point["f32_bx16_pad1"][3] == "2-way"
    assert all(r.cells[5] == "not measured" and not r.mismatch for r in sweep.rows)


def test_a_capture_without_the_points_reads_as_not_measured(tmp_path):
    # A real capture whose launches are the ladder's, not the sweep's: no point is claimed measured.
    shutil.copyfile(F32 / "profile.ncu-rep", tmp_path / "padding_sweep.ncu-rep")
    (tmp_path / "padding_sweep.json").write_text('{"points": [], "error": ""}')
    (sweep,) = experiment_tables(CASE, tmp_path)
    assert sweep.recorded and sweep.values == {}
    assert all(r.note.startswith("not measured") for r in sweep.rows)


def test_a_failed_experiment_run_is_said(tmp_path):
    (tmp_path / "padding_sweep.json").write_text('{"points": [], "error": "ncu exited with status 1"}')
    (sweep,) = experiment_tables(CASE, tmp_path)
    assert any("could not record this experiment: ncu exited with status 1" in n for n in sweep.notes)


def test_a_mismatch_is_shown_as_one():
    p = ps.Point(4, 32, 1)  # predicted 1 wavefront per load, conflict-free
    agree = {"shared_wavefronts_per_load": 1.05, "shared_wavefronts_per_store": 1.0,
             "shared_excessive_wavefronts": 0.0, "shared_load_instructions": 4096.0,
             "shared_store_instructions": 4096.0, "duration_us": 5.0}
    assert ps._row(p, agree, None).note == "matches"
    off = ps._row(p, {**agree, "shared_wavefronts_per_load": 2.0, "shared_excessive_wavefronts": 4096.0}, None)
    assert off.mismatch and off.note.startswith("MISMATCH: per load, excessive")
    wrong = ps._row(p, agree, {"point": p.id, "correct": False, "message": "3 elements differ"})
    assert wrong.mismatch and "WRONG output: 3 elements differ" in wrong.note


def test_predicted_excessive_uses_the_measured_instruction_counts():
    pred = ps.predict(ps.Point(4, 32, 0))
    assert (pred.per_load, pred.ideal_load, pred.per_store) == (32, 1, 1)
    assert pred.excessive(100, 100) == 31 * 100
    assert math.isnan(pred.excessive(math.nan, 100))


def test_claims_table_is_on_the_page_with_verdicts(page):
    verdicts = {c["says"]: c["verdict"] for c in page.section("claims").rows}
    assert verdicts["the column read of a [32][32] tile is conflict-free"] == "refuted"
    assert verdicts["[32][33] makes the column read conflict-free (33 % 32 = 1)"] == "confirmed"
    assert any(v == "not measurable here" for v in verdicts.values())
    # Claims on the sweep's points wait for its capture: "not measured", never guessed.
    claims = page.section("claims").rows
    assert {c["verdict"] for c in claims if c["at"].startswith("padding_sweep/")} == {"not measured"}


def test_next_limit_and_bank_maps_in_the_stage_sections(page):
    sections = {s.id: s for s in page.stages}
    assert "coalescing" in sections["naive"].story.next_step and "bank conflicts" in sections["smem"].story.next_step
    svg = {sid: s.charts.bank_map_svg for sid, s in sections.items()}
    assert svg["smem"].startswith("<svg") and svg["padded"].startswith("<svg")
    assert "predicted 32 wavefront(s)" in svg["smem"]
    assert "predicted 1 wavefront(s)" in svg["padded"]
    assert not svg["naive"]
    assert "Measured for the whole launch: 32.3 shared wavefronts" in sections["smem"].story.bank_map_note


def test_the_sections_render(page):
    html = render_html(page)
    for words in ('id="experiment-padding_sweep"', 'id="claims"', "Next to look at", 'class="charts bank-map"',
                  "not measurable here", "bankmap-"):
        assert words in html, words


def test_a_case_without_experiments_or_claims_gets_neither(tmp_path):
    reduction = get_case("reduction")
    assert experiment_tables(reduction, tmp_path) == [] and reduction.bank_maps("float64") == []


def test_an_unreadable_experiment_json_is_one_input_error(tmp_path):
    from profiler_report.errors import InputError

    (tmp_path / "padding_sweep.json").write_text("{not json")
    with pytest.raises(InputError) as exc:
        experiment_tables(CASE, tmp_path)
    assert "padding_sweep.json" in exc.value.one_line()


def test_measured_values_read_the_points_by_their_ranges(f32_capture):
    # The ladder capture holds no sweep range: nothing is attributed to a point.
    assert ps.measured_values(read_once(F32 / "profile.ncu-rep"), ps.EXPERIMENT) == {}
    assert ps.EXPERIMENT.point_of("pr_transpose.padding_sweep.f32_bx16_pad1") == "f32_bx16_pad1"
    assert ps.EXPERIMENT.point_of("pr_transpose.padded") is None


#: The sweep's own real capture (scripts/device/padding_sweep.sh; tests/data/README.md).
SWEEP = F32.parent / "h200_padding_sweep"


@pytest.mark.skipif(not (SWEEP / "padding_sweep.ncu-rep").is_file(),
                    reason="not recorded yet: run scripts/device/padding_sweep.sh on the GPU (tests/data/README.md)")
def test_the_recorded_sweep_measures_every_point_beside_its_prediction():
    import json

    (sweep,) = experiment_tables(CASE, SWEEP)
    assert sweep.recorded and set(sweep.values) == {p.id for p in ps.POINTS}
    meta = json.loads((SWEEP / "padding_sweep.json").read_text())
    assert len(meta["points"]) == 20 and all(p["correct"] for p in meta["points"])
    assert any(n.startswith("Its own capture") for n in sweep.notes)
    rows = {r.point: r for r in sweep.rows}
    # The two points the ladder measures too (smem's [32][32], padded's [32][33]): 32.3 and 1.06 there.
    assert rows["f32_bx32_pad0"].note == "matches" and rows["f32_bx32_pad1"].note == "matches"
    assert all(r.note == "matches" or r.note.startswith("MISMATCH") for r in sweep.rows)
