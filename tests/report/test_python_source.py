"""report.python_source: a Python stage's source diffed on code (``#`` comments aside, ``//``
floor division kept) and highlighted with pygments' Python lexer."""

from __future__ import annotations

from profiler_report.report.diff import code_diff, code_diff_html
from profiler_report.report.python_source import python_code_lines


def test_comments_go_floor_division_stays():
    text = "n = a // 2  # half\n# only a comment\n\nx = '#not a comment'\n"
    assert python_code_lines(text) == ["n = a // 2", "", "", "x = '#not a comment'"]


def test_a_comment_only_change_is_no_code_change():
    old = "def f(x):\n    return x // 2  # halve\n"
    new = "def f(x):\n    return x // 2  # halve it\n"
    diff, hidden = code_diff(old, new, "a", "b", lines_of=python_code_lines)
    assert diff == "" and hidden == 1
    diff, _ = code_diff(old, new.replace("// 2", "// 4"), "a", "b", lines_of=python_code_lines)
    assert "-    return x // 2" in diff and "+    return x // 4" in diff


def test_a_python_ladders_first_stage_is_highlighted_as_python():
    from pathlib import Path

    from profiler_report.model.registry import get_case

    case = get_case(str(Path(__file__).resolve().parents[2] / "examples" / "softmax"))
    source = "def eager(x, out):\n    return x  # same\n"
    comment = '<span style="color: #60A0B0; font-style: italic"># same</span>'  # pygments' Python comment
    assert comment in code_diff_html(None, source, "", "eager", case)
    assert comment not in code_diff_html(None, source, "", "eager", None)  # CUDA: '#' starts a directive
