"""Number formatting."""

from __future__ import annotations

import math
from typing import Any


def fmt(x: Any, unit: str = "") -> str:
    """Human formatting: NaN -> 'not measured'; big counts with separators; small with 3 digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "not measured"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if unit == "%":
        return f"{x:.1f}%"
    if abs(x) >= 1000 or (x == int(x) and abs(x) >= 10):
        return f"{x:,.0f}"
    if x == int(x):
        return f"{int(x)}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"


def md_cell(text: Any) -> str:
    """One GitHub-flavoured Markdown table cell: ``|`` escaped, line breaks folded to spaces."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(header: list[str], rows: list[list[Any]], align: list[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table (as ``$GITHUB_STEP_SUMMARY`` and PR comments show it).

    ``align`` gives one of "l", "r" per column (default: left).
    """
    marks = {"l": "---", "r": "---:"}
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |",
             "| " + " | ".join(marks[a] for a in (align or ["l"] * len(header))) + " |"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
