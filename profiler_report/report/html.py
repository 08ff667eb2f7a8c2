"""The report's files: the page through its template (index.html) and the summary's data files
(:data:`~profiler_report.report.outputs.SUMMARY`'s writers that name one)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from profiler_report.analysis import Analysis
from profiler_report.report.outputs import SUMMARY, SummaryInput
from profiler_report.report.page import Page
from profiler_report.util.fsio import atomic_write_many, ensure_dir
from profiler_report.util.resources import resource_dir


@functools.cache
def _environment() -> jinja2.Environment:
    """The page's templates (autoescape on, undefined names are errors), one environment per
    process: it keeps each template compiled (and reloads one whose file changed)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["code"] = inline_code
    return env


def compile_templates() -> None:
    """Compile the page's templates now (~0.06 s): ``render`` does it while the capture is read,
    so that writing the page does not."""
    env = _environment()
    for name in env.list_templates(filter_func=lambda n: n.endswith(".html.j2")):
        env.get_template(name)


def render_html(page: Page) -> str:
    """The page through ``templates/report.html.j2``."""
    return _environment().get_template("report.html.j2").render(page=page)


_BACKTICKS = re.compile(r"`([^`]+)`")


def inline_code(text: str) -> markupsafe.Markup:
    """Escape ``text`` and turn `backticked` spans (as the manifest writes code) into <code>."""
    escaped = str(markupsafe.escape(text))
    return markupsafe.Markup(_BACKTICKS.sub(r"<code>\1</code>", escaped))


def write_outputs(folder: Path, page: Page, analysis: Analysis, sanitizer: dict[str, Any] | None = None) -> list[Path]:
    """Write index.html, summary.csv and summary.json (with ``sanitizer``: sanitizer.json's content)
    into ``folder`` together (all temporary files
    first, then the renames); return their paths. A symlink in ``folder`` with one of those names
    is replaced by the file; its target is never written.

    Raises:
        InputError: ``folder`` is a dangling symlink or a file (:func:`~profiler_report.util.fsio.ensure_dir`).
        OSError: the folder cannot be written.
    """
    ensure_dir(folder)
    html = render_html(page)
    data = SUMMARY.files(SummaryInput(analysis, sanitizer))  # summary.csv, summary.json: as `summary` prints them
    files: dict[Path, str] = {folder / "index.html": html, **{folder / name: text for name, text in data.items()}}
    atomic_write_many(files, follow_links=False)  # a link inside the folder is replaced, never its target
    return list(files)


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{%|%\}")


def has_placeholder(html: str) -> bool:
    """True when template syntax leaked into the output."""
    return bool(_PLACEHOLDER.search(html))
