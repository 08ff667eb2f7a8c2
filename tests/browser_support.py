"""The browser checks of a report page, in headless Chromium driven by Playwright.

:func:`page_problems` opens one HTML file and returns what a reader would meet: console errors,
any request besides the file itself (every request is intercepted and counted; none leaves the
machine), in-page links without a target, stage sections missing, content that runs off the
page at a given window width (wide tables must scroll inside their own box), and whether it
prints to PDF with nothing past the paper's edge. The browser is Debian's ``chromium`` (no
browser download): :func:`chromium_path`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Set (to anything but "" or "0") by .ci/run: a missing browser fails the browser tests there.
REQUIRE_ENV = "PROFILER_REPORT_REQUIRE_BROWSER"
#: The Chromium executable to use, when it is not on PATH as chromium.
CHROMIUM_ENV = "PROFILER_REPORT_CHROMIUM"

#: Window widths checked: the brief's 1024 px and the 800 px at which the summary ran off.
WIDTHS = (1024, 800)
#: A4's width less Chromium's default print margins (0.4 in a side), in CSS px (96 per inch).
PRINT_WIDTH = round((8.27 - 0.8) * 96)

#: Elements that run off the right edge of the window and are not inside a box that scrolls or
#: clips them: (tag#id.class, right edge in px). JavaScript, run in the page.
_OVERFLOW_JS = """(width) => {
  const scrolls = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden" || o === "clip") return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 1 || scrolls(el)) continue;
    const parent = el.parentElement;
    if (parent && parent !== document.body && parent.getBoundingClientRect().right > width + 1 && !scrolls(parent))
      continue;  // name the outermost element that runs off, not each of its children
    const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.classList.length ? "." + [...el.classList].join(".") : "");
    out.push([name, Math.round(r.right)]);
  }
  return {scrollWidth: document.documentElement.scrollWidth, offenders: out.slice(0, 5)};
}"""

#: In-page link targets that do not exist, and the ids of every stage section.
_LINKS_JS = """() => ({
  missing: [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute("href").slice(1))
             .filter(id => id && !document.getElementById(decodeURIComponent(id))),
  sections: [...document.querySelectorAll("section.stage")].map(s => s.id),
})"""


def chromium_path() -> str | None:
    """The Chromium executable: ``$PROFILER_REPORT_CHROMIUM``, else chromium (Debian) on PATH."""
    given = os.environ.get(CHROMIUM_ENV)
    if given:
        return given if os.path.isfile(given) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def page_problems(browser: Any, html: Path, stages: Iterable[str] = (), widths: Iterable[int] = WIDTHS,
                  pdf: bool = True) -> list[str]:
    """Open ``html`` (a file) in a new page of ``browser`` and list every problem found, one
    line each ([] for a good page). ``stages``: the stage ids whose ``section#stage-<id>`` must
    exist."""
    url = Path(html).resolve().as_uri()
    problems: list[str] = []
    requests: list[str] = []
    page = browser.new_page(viewport={"width": max(widths, default=1024), "height": 900})
    try:
        page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}")
                if msg.type in ("error", "warning") else None)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))

        def route(r: Any) -> None:
            if r.request.url == url:
                r.continue_()
            else:  # counted, never fetched
                requests.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.goto(url, wait_until="load")
        links = page.evaluate(_LINKS_JS)
        problems += [f"in-page link without a target: #{t}" for t in links["missing"]]
        problems += [f"stage section missing: section#stage-{s}" for s in stages
                     if f"stage-{s}" not in links["sections"]]
        for width in widths:
            page.set_viewport_size({"width": width, "height": 900})
            found = page.evaluate(_OVERFLOW_JS, width)
            if found["scrollWidth"] > width or found["offenders"]:
                where = ", ".join(f"{name} (right edge {right} px)" for name, right in found["offenders"]) or "?"
                problems.append(f"runs off the page at {width} px (page {found['scrollWidth']} px wide): {where}")
        if pdf:
            data = page.pdf(format="A4", print_background=True)
            if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-64:] or len(data) < 1024:
                problems.append(f"printing to PDF gave no document ({len(data)} bytes)")
            # Paper cannot scroll: under print media nothing may run past A4's printable width.
            page.emulate_media(media="print")
            page.set_viewport_size({"width": PRINT_WIDTH, "height": 1123})
            found = page.evaluate(_OVERFLOW_JS, PRINT_WIDTH)
            if found["scrollWidth"] > PRINT_WIDTH or found["offenders"]:
                where = ", ".join(f"{name} (right edge {right} px)" for name, right in found["offenders"]) or "?"
                problems.append(f"runs off the printed page ({PRINT_WIDTH} px): {where}")
        problems += [f"request other than the file itself: {u}" for u in requests]
    finally:
        page.close()
    return problems
