"""One figure, one number: rendering the committed reports' captures, a stage's GB/s reads the
same wherever the page shows it (the ladder table, the headline, its metrics table, the peers
table's timing-run column), and the bandwidth chart plots those same values. The peers' own run
is shown once beside it, named."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

import pytest

from profiler_report.analysis.run import load_run
from profiler_report.analysis.story import tell
from profiler_report.report.build import render_capture
from profiler_report.report.cells import cell, cell_rules
from profiler_report.report.charts import bandwidth_chart_data

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = {"transpose": ROOT / "reports" / "h200" / "profile.ncu-rep",
            "reduction": ROOT / "reports" / "h200-reduction" / "profile.ncu-rep"}

_FIGURE = re.compile(r'data-figure="(gbps|pct)" data-stage="([^"]+)">([^<]*)<')


@pytest.fixture(scope="module", params=sorted(CAPTURES))
def rendered(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    render_capture(CAPTURES[request.param], out, force=True)
    return request.param, (out / "index.html").read_text()


def test_each_stage_figure_is_the_same_wherever_it_appears(rendered):
    name, html = rendered
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    places: dict[tuple[str, str], int] = defaultdict(int)
    for figure, stage, text in _FIGURE.findall(html):
        seen[figure, stage].add(text)
        places[figure, stage] += 1
    assert seen, "no figure marked on the page"
    assert {s: t for s, t in seen.items() if len(t) > 1} == {}
    # Shown at least twice each (the ladder and the stage's metrics table), so the check has teeth.
    assert min(places.values()) >= 2, places
    headline = re.search(r'id="headline">([^<]*)<', html).group(1)
    fastest = re.search(r"The fastest stage, (\w+), reaches ([\d,.]+) ", headline)
    assert fastest and seen["gbps", fastest.group(1)] == {fastest.group(2)}, headline
    pct = re.search(r"reaches [\d,.]+ [^(]*\(([\d.]+%) of ", headline)
    assert pct and seen["pct", fastest.group(1)] == {pct.group(1)}, headline


def test_the_peer_run_is_shown_once_and_named(rendered):
    name, html = rendered
    if 'id="peers"' not in html:
        pytest.skip(f"{name}: no peers recorded")
    assert html.count("GB/s, peer run") == 1 and html.count("GB/s, timing run") == 1
    assert "bench.json" in html and "timings.json" in html


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_the_chart_plots_the_ladder_figures(name):
    run = load_run(CAPTURES[name])
    story = tell(run.analysis, run.case, side=run.sidecars)
    rules = cell_rules(run.sidecars.validation, "", run.summary)
    data = bandwidth_chart_data(run.summary, run.sidecars.timings).set_index("label")
    rows = {str(r["stage"]): r for _, r in run.summary.iterrows()}
    for r in story.ladder.rows:
        assert math.isclose(data.loc[r.stage, "gbps"], r.gbps), r.stage
        assert str(cell(rows[r.stage], story.ladder.speed.column, rules)) == \
            str(cell({"stage": r.stage, "event_gbps": data.loc[r.stage, "gbps"]}, "event_gbps", rules))
