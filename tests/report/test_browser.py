"""The report pages in a real browser (headless Chromium): the committed live report, a recorded-
capture render, a counter-less render and a foreign capture (labelled with --stage) load with no
console error, make no request but the file itself, have every stage section and link target,
run off no page at 1024 (and 800) px, and print to PDF; and a deliberately broken page fails.

Needs Debian's ``chromium`` (``make test`` installs it when root) and Playwright (the test extra).
Without them these tests are skipped with one line, except where PROFILER_REPORT_REQUIRE_BROWSER
is set (.ci/run sets it): there they fail.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_support import browser_required, chromium_path, page_problems
from conftest import F64

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "reports" / "h200"

pytestmark = pytest.mark.browser

#: The foreign capture's labels: a capture read as if made elsewhere (no case, names by regex).
FOREIGN_LABELS = [("slow", "transpose_naive$"), ("tiled", "transpose_smem$"), ("padded", "transpose_padded$"),
                  ("wide", "transpose_vec_deep$")]


def _missing(why: str) -> None:
    if browser_required():
        pytest.fail(f"{why} (PROFILER_REPORT_REQUIRE_BROWSER is set: the browser tests must run here)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    exe = chromium_path()
    if exe is None:
        _missing("no Chromium: apt-get install chromium (make test does, as root), or set PROFILER_REPORT_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("no Playwright: pip install -e '.[test]'")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe)
        yield b
        b.close()


def _stage_ids(folder: Path) -> list[str]:
    """The stages (not ceilings) the folder's summary.json lists: each must have its section."""
    doc = json.loads((folder / "summary.json").read_text())
    return [s["stage"] for s in doc["stages"] if s["role"] == "stage"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """The committed live capture rendered as a recorded capture (with its peers and sweeps)."""
    from profiler_report.report.build import render_capture

    out = tmp_path_factory.mktemp("recorded")
    render_capture(LIVE / "profile.ncu-rep", out)
    return out


@pytest.fixture(scope="module")
def counterless(tmp_path_factory) -> Path:
    """The live run's own timings, validation and sweeps, rendered as a run without counters."""
    from profiler_report.report.build import render_timings_only

    out = tmp_path_factory.mktemp("counterless")
    for name in ("timings.json", "validation.json", "bench.json", "sweep.json"):
        shutil.copy(LIVE / name, out / name)
    prov = json.loads((LIVE / "provenance.json").read_text())
    prov.update(counters="unavailable (--no-counters)", section_set="none (--no-counters)")
    (out / "provenance.json").write_text(json.dumps(prov))
    render_timings_only(out, live=False)
    return out


@pytest.fixture(scope="module")
def foreign(tmp_path_factory) -> Path:
    """The float64 capture read as one made elsewhere: no case, stages named by --stage regexes."""
    from profiler_report.report.build import render_capture

    out = tmp_path_factory.mktemp("foreign")
    render_capture(F64 / "profile.ncu-rep", out, labels=FOREIGN_LABELS)
    return out


def _folder(request: pytest.FixtureRequest, name: str) -> Path:
    """The folder (index.html, summary.json) of a page: each rendered only by a worker that needs it."""
    return LIVE if name == "live" else request.getfixturevalue(name)


@pytest.mark.parametrize("name", ["live", "recorded", "counterless", "foreign"])
def test_page_is_clean_in_a_browser(browser, request, name):
    folder = _folder(request, name)
    stages = _stage_ids(folder)
    assert stages, "a page with no stage proves nothing"
    if name == "foreign":
        assert stages == [label for label, _ in FOREIGN_LABELS]
    assert page_problems(browser, folder / "index.html", stages) == []


def test_wide_tables_scroll_inside_their_box(browser):
    # At 800 px the summary is wider than the page: it must scroll in its box (not be cut, not push the page).
    page = browser.new_page(viewport={"width": 800, "height": 900})
    try:
        page.goto((LIVE / "index.html").resolve().as_uri())
        box = page.evaluate("""() => { const w = document.querySelector('#summary + .wide');
            return {scroll: w.scrollWidth, client: w.clientWidth, overflow: getComputedStyle(w).overflowX}; }""")
    finally:
        page.close()
    assert box["scroll"] > box["client"] and box["overflow"] == "auto", box


def test_a_broken_page_fails_every_check(browser, tmp_path):
    html = (LIVE / "index.html").read_text()
    broken = html.replace("</body>", """
<img src="https://example.invalid/logo.png" alt="">
<table><tr><td style="white-space: nowrap">""" + "overflowing " * 200 + """</td></tr></table>
<a href="#nowhere">a link to nothing</a>
<script>console.error("deliberately broken");</script>
</body>""")
    broken = broken.replace('id="stage-naive"', 'id="stage-renamed"')
    page = tmp_path / "index.html"
    page.write_text(broken)
    problems = page_problems(browser, page, ["naive", "smem"])
    text = "\n".join(problems)
    assert "request other than the file itself: https://example.invalid/logo.png" in text
    assert "runs off the page at 1024 px" in text and "runs off the page at 800 px" in text
    assert "runs off the printed page" in text
    assert "in-page link without a target: #nowhere" in text and "#stage-naive" in text
    assert "stage section missing: section#stage-naive" in text and "smem" not in text.split("missing:")[-1]
    assert "console error: deliberately broken" in text


_GLANCE_JS = """() => {
  const all = [...document.querySelectorAll('*')];
  const pos = (sel) => { const el = document.querySelector(sel); return el ? all.indexOf(el) : -1; };
  const toc = [...document.querySelectorAll('nav#toc a')].map(a => a.getAttribute('href').slice(1));
  const stages = [...document.querySelectorAll('section.stage')];
  return {
    headline: pos('#headline'), environment: pos('#environment'), summary: pos('#summary'),
    headlineText: (document.querySelector('#headline .headline') || {}).textContent || '',
    headlineChart: !!document.querySelector('#headline svg'),
    toc, tocResolves: toc.every(id => document.getElementById(id)),
    sections: [...document.querySelectorAll('h2[id], section.stage[id]')].map(e => e.id),
    openings: stages.map(s => [...s.children].slice(1, 3).map(e => e.className || e.textContent.slice(0, 13))),
    stallMax: [...document.querySelectorAll('.stall-chart')].map(d => d.dataset.valueMax),
    stallCharts: stages.filter(s => s.querySelector('.stall-chart svg')).length,
    verdicts: Object.fromEntries(stages.map(s => [s.id, s.querySelector('p.verdict').textContent])),
    differs: [...document.querySelectorAll('.why-differs')].map(e => e.closest('section').id),
    peersNote: [...document.querySelectorAll('#peers ~ p.note')].map(p => p.textContent).join(' '),
  };
}"""


def test_the_report_reads_at_a_glance(browser, recorded):
    page = browser.new_page(viewport={"width": 1024, "height": 900})
    try:
        page.goto((recorded / "index.html").resolve().as_uri())
        got = page.evaluate(_GLANCE_JS)
    finally:
        page.close()
    stages = _stage_ids(recorded)
    # The headline (sentence and bandwidth chart) comes first, before the provenance table.
    assert 0 <= got["headline"] < got["environment"] < got["summary"], got
    assert got["headlineChart"] and f"{len(stages)} stages take the kernel from" in got["headlineText"]
    # The table of contents lists every section, in page order, and every link resolves.
    assert got["tocResolves"] and got["toc"] == [s for s in got["sections"] if s in got["toc"]]
    assert {f"stage-{s}" for s in stages} | {"environment", "summary", "sources"} <= set(got["toc"])
    assert set(got["sections"]) <= set(got["toc"]), set(got["sections"]) - set(got["toc"])
    # Each stage opens with its one change (naive: the baseline) and its verdict.
    assert all(o[-1] == "verdict" for o in got["openings"]), got["openings"]
    # Stall charts on one scale.
    assert got["stallCharts"] == len(stages) and len(set(got["stallMax"])) == 1 and float(got["stallMax"][0]) > 0
    # The verdict names the expected effect first (unrolled: stays conflict-free; vec_deep likewise).
    for sid in ("unrolled", "vec_deep"):
        v = got["verdicts"][f"stage-{sid}"]
        assert v.index("expected effect: excessive shared wavefronts") < v.index("also moved"), v
    # ncu's "Shared Load Bank Conflicts" under a conflict-free verdict is explained (unrolled).
    assert "stage-unrolled" in got["differs"] and "stage-smem" not in got["differs"]
    # Two timing runs: the peers' table says which run its figures come from.
    assert "bench.json" in got["peersNote"] and "timings.json" in got["peersNote"]
