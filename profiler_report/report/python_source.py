"""A Python stage's source on the page: highlighted with pygments' Python lexer, and the diff
from the previous stage matched on code, comments and blank lines aside (Python's own
tokenizer: ``#`` comments; ``//`` is floor division there, not a comment)."""

from __future__ import annotations

import io
import tokenize

from pygments.lexers import PythonLexer


def python_code_lines(text: str) -> list[str]:
    """Each line of Python source reduced to its code: ``#`` comments removed, whitespace
    collapsed; a comment-only or blank line becomes "". Source that does not tokenize (cut in
    the middle of a string) falls back to dropping what follows a ``#`` outside quotes."""
    lines = text.splitlines()
    comments: dict[int, int] = {}  # line -> column where its comment starts
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        comments = {i: line.index("#") for i, line in enumerate(lines, 1) if "#" in line and "'" not in line
                    and '"' not in line}
    return [" ".join(line[:comments.get(i, len(line))].split()) for i, line in enumerate(lines, 1)]


def lexer() -> PythonLexer:
    """The pygments lexer of a Python stage's source."""
    return PythonLexer()
