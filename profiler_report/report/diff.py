"""A stage's source as the page shows it: a unified diff from the previous stage without the
hunks that change only comments or blank lines, highlighted by pygments."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer, DiffLexer

from profiler_report.model.base import Case
from profiler_report.report.python_source import lexer as python_lexer
from profiler_report.report.python_source import python_code_lines

_FORMATTER = HtmlFormatter(noclasses=True, nowrap=False, style="friendly")


def code_diff_html(previous: str | None, current: str, prev_id: str, cur_id: str, case: Case | None = None) -> str:
    """The stage's source as a highlighted unified diff from the previous stage (or in full);
    the case makes what differs by design (function names) equal first, and hunks that change
    only comments or blank lines are left out (:func:`code_diff`). A Python stage's source (the
    case's ``source_language`` "python") is read with Python's lexer and comment rules."""
    python = case is not None and case.source_language == "python"
    if previous is None:
        return highlight(current, python_lexer() if python else CudaLexer(), _FORMATTER)
    norm_prev = case.normalize_source(previous, prev_id) if case else previous
    norm_cur = case.normalize_source(current, cur_id) if case else current
    diff, hidden = code_diff(norm_prev, norm_cur, prev_id, cur_id, lines_of=python_code_lines if python else code_lines)
    if hidden:
        diff = (diff or "(no code change)") + (f"\n# {hidden} line{'s' if hidden > 1 else ''} that differ only in "
                                               "comments or blank lines not shown")
    return highlight(diff or "(no source change)", DiffLexer(), _FORMATTER)


_COMMENT = re.compile(r"//.*$")


def code_lines(text: str) -> list[str]:
    """Each line of CUDA source reduced to its code: comments (``//`` and ``/* */``, also across
    lines) removed, whitespace collapsed; a comment-only or blank line becomes ""."""
    out, in_block = [], False
    for line in text.splitlines():
        code = ""
        rest = line
        while rest:
            if in_block:
                end = rest.find("*/")
                if end < 0:
                    rest = ""
                    break
                rest, in_block = rest[end + 2:], False
            else:
                start = rest.find("/*")
                head = rest if start < 0 else rest[:start]
                code += _COMMENT.sub("", head) if "//" in head else head
                if start < 0 or "//" in head:
                    break
                rest, in_block = rest[start + 2:], True
        out.append(" ".join(code.split()))
    return out


def code_diff(previous: str, current: str, prev_id: str, cur_id: str, context: int = 3,
              lines_of: Callable[[str], list[str]] | None = None) -> tuple[str, int]:
    """A unified diff (``context`` lines) of two sources without the hunks whose changed lines all
    read the same as code (:func:`code_lines`: only comments or blank lines differ). Lines are
    matched on their code, so a line whose trailing comment changed is context. Returns (diff
    text, "" when no code changed; how many lines that differ only in comments were left out)."""
    a, b = previous.splitlines(), current.splitlines()
    lines_of = lines_of or code_lines  # CUDA by default; a Python stage's: python_code_lines
    ka, kb = lines_of(previous), lines_of(current)
    matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    every = list(matcher.get_opcodes())  # a copy: get_grouped_opcodes trims the cached list in place
    out = [f"--- {prev_id}", f"+++ {cur_id}"]
    shown: set[int] = set()  # lines of ``current`` in a hunk shown
    for group in matcher.get_grouped_opcodes(context):
        changed = [op for op in group if op[0] != "equal"]
        if all(not any(ka[i1:i2]) and not any(kb[j1:j2]) for _, i1, i2, j1, j2 in changed):
            continue
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        shown.update(range(j1, j2))
        out.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out += [" " + line for line in b[y1:y2]]
                continue
            out += ["-" + line for line in a[x1:x2]]
            out += ["+" + line for line in b[y1:y2]]
    hidden = 0  # lines left out that differ in their comments only
    for tag, x1, x2, y1, y2 in every:
        if tag == "equal":
            hidden += sum(a[x] != b[y] and y not in shown for x, y in zip(range(x1, x2), range(y1, y2), strict=True))
        elif not set(range(y1, y2)) & shown and not any(ka[x1:x2]) and not any(kb[y1:y2]):
            hidden += max(x2 - x1, y2 - y1)
    return ("\n".join(out) if len(out) > 2 else ""), hidden
