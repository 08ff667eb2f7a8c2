"""The page model: assembled once by build_page from the analysis and the story, frozen, with
every section in the contents; report/ lays results out and judges nothing itself."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from profiler_report.analysis.story import tell
from profiler_report.model.registry import get_case
from profiler_report.report.charts import chart_jobs, draw_here
from profiler_report.report.page import PageInputs, build_page

REPORT = Path(__file__).resolve().parents[2] / "profiler_report" / "report"
PROV = {"mode": "recorded capture", "gpu": "NVIDIA H200", "dtype": "float32"}


@pytest.fixture(scope="module")
def built(f32_analysis):
    case = get_case("transpose")
    calls = []
    jobs = chart_jobs(f32_analysis)

    def charts():
        calls.append(1)
        return draw_here(jobs)
    page = build_page(PageInputs(f32_analysis, PROV, tell(f32_analysis, case), case), charts)
    return page, calls


def test_the_page_is_built_in_one_pass_and_frozen(built):
    page, calls = built
    assert calls == [1]  # the charts are asked for once, while the page is built
    for obj in (page, page.ladder, page.stages[0], page.stages[0].charts, *page.sections):
        assert dataclasses.is_dataclass(obj) and obj.__dataclass_params__.frozen, type(obj)
    with pytest.raises(dataclasses.FrozenInstanceError):
        page.headline = "patched"  # type: ignore[misc]


def test_the_contents_list_every_stage_and_section_in_page_order(built):
    page, _ = built
    toc = [a for a, _ in page.toc]
    assert toc[0] == "ladder"
    assert toc[1:1 + len(page.stages)] == [f"stage-{s.id}" for s in page.stages]
    assert toc[1 + len(page.stages):] == [s.anchor for s in page.sections]
    assert len(set(toc)) == len(toc)
    assert {"environment", "sources", "claims"} <= set(toc)


def test_the_ladder_and_the_stage_sections_agree(built):
    page, _ = built
    assert [line.stage for line in page.ladder.lines] == [s.id for s in page.stages]
    assert [line.verdict for line in page.ladder.lines] == [s.word for s in page.stages]
    assert page.ladder.lines[0].verdict == "baseline"
    assert all(s.change for s in page.stages) and all(line.change for line in page.ladder.lines)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


@pytest.mark.parametrize("path", sorted(REPORT.glob("*.py")), ids=lambda p: p.name)
def test_the_report_layer_reads_no_capture_and_judges_nothing(path):
    judged_in_analysis = {"profiler_report.capture.load", "profiler_report.analysis.claims",
                          "profiler_report.analysis.next_step", "profiler_report.analysis.attribution",
                          "profiler_report.analysis.verdicts"}
    assert _imports(path) & judged_in_analysis == set()


def test_every_name_on_the_page_is_escaped(tmp_path):
    # A stage label is the user's text: it reaches the ladder, the contents, ids and data attributes.
    from conftest import F64

    from profiler_report.report.build import render_capture

    payload = '<img src=x onerror=alert(1)>"\''
    render_capture(F64 / "profile.ncu-rep", tmp_path, labels=[(payload, "transpose_naive$"),
                                                               ("padded", "transpose_padded$")])
    html = (tmp_path / "index.html").read_text()
    assert "<img src=x" not in html and 'onerror=alert(1)>"' not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
