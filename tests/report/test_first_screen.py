"""The story in thirty seconds, in headless Chromium: for every page kind (live, recorded transpose,
recorded reduction, a run without counters, a ladder of captures made elsewhere) the ladder table
starts on the first screen at 1280x800 with a verdict in every stage row and nothing scrolled
sideways, the page is at most 16,000 px tall at 1280 with its details closed, and no element is
wider than the viewport at 1024.

The recorded transpose's first screen is also the README's screenshot: with
PROFILER_REPORT_SCREENSHOT set, the test writes it to docs/first-screen.png.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from browser_support import browser_required, chromium_path

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "reports" / "h200"
FOREIGN = ROOT / "tests" / "data" / "foreign" / "ladder"

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The page height target at 1280 px, details closed (20 screens of 800 px).
MAX_HEIGHT = 16_000
KINDS = ("live", "recorded", "reduction", "counterless", "foreign")

_FIRST_JS = """() => {
  const t = document.querySelector('#ladder');
  const rows = [...t.querySelectorAll('tr[data-stage]')];
  const cut = (el) => el.scrollWidth > el.clientWidth + 1;
  return {
    top: Math.round(t.getBoundingClientRect().top + window.scrollY),
    right: Math.round(t.getBoundingClientRect().right),
    words: rows.map(r => { const c = r.querySelector('td.word');
      return c && c.getBoundingClientRect().right <= window.innerWidth && getComputedStyle(c).display !== 'none'
        ? c.textContent.trim() : ''; }),
    cut: [...t.querySelectorAll('td, th')].filter(cut).length,
    scrollWidth: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    open: document.querySelectorAll('details[open]').length,
  };
}"""

#: Elements wider than the viewport (outside a box that scrolls them).
_WIDE_JS = """(width) => [...document.body.querySelectorAll('*')].filter(el => {
  const r = el.getBoundingClientRect();
  if (r.width <= width + 1) return false;
  for (let p = el.parentElement; p; p = p.parentElement) {
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return false;
  }
  return true;
}).map(el => el.tagName + (el.id ? '#' + el.id : '')).slice(0, 5)"""


@pytest.fixture(scope="module")
def browser():
    exe = chromium_path()
    if exe is None:
        if browser_required():
            pytest.fail("no Chromium (PROFILER_REPORT_REQUIRE_BROWSER is set)")
        pytest.skip("no Chromium: apt-get install chromium, or set PROFILER_REPORT_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if browser_required():
            pytest.fail("no Playwright (PROFILER_REPORT_REQUIRE_BROWSER is set)")
        pytest.skip("no Playwright: pip install -e '.[test]'")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe)
        yield b
        b.close()


def _render(kind: str, out: Path) -> Path:
    from profiler_report.report.build import render_capture, render_timings_only

    if kind in ("live", "recorded"):
        here = os.getcwd()
        os.chdir(ROOT)  # the page names the capture as given: relative, as in the README's screenshot
        try:
            render_capture(Path("reports/h200/profile.ncu-rep"), out, live=kind == "live", force=True)
        finally:
            os.chdir(here)
    elif kind == "reduction":
        render_capture(ROOT / "reports" / "h200-reduction" / "profile.ncu-rep", out, force=True)
    elif kind == "counterless":
        out.mkdir(parents=True, exist_ok=True)
        for name in ("timings.json", "validation.json", "bench.json", "sweep.json"):
            shutil.copy(LIVE / name, out / name)
        prov = json.loads((LIVE / "provenance.json").read_text())
        prov.update(counters="unavailable (--no-counters)", section_set="none (--no-counters)")
        (out / "provenance.json").write_text(json.dumps(prov))
        render_timings_only(out, live=False)
    else:  # a ladder of one capture per version, made elsewhere
        paths = [FOREIGN / f"{k}.ncu-rep" for k in ("naive", "coalesced", "conflict_free", "copy")]
        render_capture(paths, out, ceilings=[("copy", "^copy$")])
    return out / "index.html"


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    return {k: _render(k, tmp_path_factory.mktemp(k)) for k in KINDS}


def _measure(browser, html: Path, width: int) -> dict:
    page = browser.new_page(viewport={"width": width, "height": 800})
    try:
        page.goto(html.resolve().as_uri())
        got = page.evaluate(_FIRST_JS)
        got["wide"] = page.evaluate(_WIDE_JS, width)
    finally:
        page.close()
    return got


@pytest.mark.parametrize("kind", KINDS)
def test_the_ladder_is_on_the_first_screen_with_a_verdict_in_every_row(browser, pages, kind):
    got = _measure(browser, pages[kind], 1280)
    assert got["top"] < 800, got
    assert got["words"] and all(got["words"]), got["words"]
    assert got["cut"] == 0 and got["scrollWidth"] <= 1280 and got["right"] <= 1280, got


@pytest.mark.parametrize("kind", KINDS)
def test_the_page_is_at_most_twenty_screens_with_details_closed(browser, pages, kind):
    got = _measure(browser, pages[kind], 1280)
    assert got["open"] == 0 and got["height"] <= MAX_HEIGHT, got["height"]


@pytest.mark.parametrize("kind", KINDS)
def test_nothing_is_wider_than_the_viewport_at_1024_and_the_verdict_stays(browser, pages, kind):
    got = _measure(browser, pages[kind], 1024)
    assert got["scrollWidth"] <= 1024 and got["wide"] == [], got
    assert all(got["words"]), got["words"]


def test_the_first_screen_screenshot(browser, pages, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(pages["recorded"].resolve().as_uri())
        png = tmp_path / "first-screen.png"
        page.screenshot(path=str(png))
    finally:
        page.close()
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG") and int.from_bytes(data[16:20], "big") == 1280
    assert len(data) < 300_000, len(data)
    if os.environ.get("PROFILER_REPORT_SCREENSHOT"):
        (ROOT / "docs").mkdir(exist_ok=True)
        shutil.copy(png, ROOT / "docs" / "first-screen.png")
