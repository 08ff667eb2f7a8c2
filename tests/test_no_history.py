"""The product speaks of the tool and its kernels only: no project history in the README, the
templates, the cases' stages.toml, ``--help`` or a rendered page of each case. Articles are cited
by title (never by a file number like "000"), and there are no work items ("issue 14") or
work-log ordinals ("the eleventh session")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from profiler_report.cli import main
from profiler_report.report.build import render_capture

ROOT = Path(__file__).resolve().parent.parent

#: What reads as project history. An article's file number (a 00N not part of a number, a hex
#: colour or an identifier), a work item, a work-log ordinal, a work session or round.
HISTORY = re.compile(
    r"(?<![\w,.#-])00[0-3](?:'s)?(?![\w,.])"
    r"|\bissues? #?\d+"
    r"|\b(?:fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth)\b"
    r"|\b(?:this|that|the|a|an|every|each|previous|next|last|earlier|later) (?:work )?(?:session|round)s?\b",
    re.IGNORECASE)
#: Drawn pictures and styles are not prose (matplotlib writes "stroke-linejoin: round").
_NOT_PROSE = re.compile(r"<svg.*?</svg>|<style.*?</style>", re.S)


def history(text: str) -> list[str]:
    """Each match of :data:`HISTORY` in ``text``, with a little context."""
    return [text[max(0, m.start() - 30):m.end() + 30].replace("\n", " ") for m in HISTORY.finditer(text)]


def _product_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "templates").rglob("*")),
             *sorted((ROOT / "kernels").glob("*/stages.toml")), *sorted((ROOT / "examples").glob("*/stages.toml"))]
    return [f for f in files if f.is_file()]


def test_the_pattern_catches_history_and_passes_numbers():
    for bad in ("000's order", "as 002 says", "see issue 14", "the eleventh session", "in this round"):
        assert history(bad), bad
    for good in ("1,000 elements", "fill: #A000", "0.003 us", "x000_y", "round: 2", "rounded up", "10003"):
        assert not history(good), good


@pytest.mark.parametrize("path", _product_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_history_in_the_product_files(path):
    assert history(path.read_text(errors="replace")) == []


def _commands() -> list[list[str]]:
    return [[], *([name] for name in sorted(main.commands))]


@pytest.mark.parametrize("args", _commands(), ids=lambda a: " ".join(a) or "main")
def test_no_history_in_help(args):
    result = CliRunner().invoke(main, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert history(result.output) == []


@pytest.mark.slow
@pytest.mark.parametrize("capture", ["reports/h200/profile.ncu-rep", "reports/h200-reduction/profile.ncu-rep",
                                     "reports/h200-histogram/profile.ncu-rep"])
def test_no_history_on_a_rendered_page_of_each_case(capture, tmp_path):
    render_capture(ROOT / capture, tmp_path, force=True)
    page = _NOT_PROSE.sub("", (tmp_path / "index.html").read_text())
    assert history(page) == []
