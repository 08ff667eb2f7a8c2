"""Number formatting: the one policy every figure of the page, the console and the gate follows.

- Not measured (None, NaN) reads "not measured"; text passes through.
- A percentage has one decimal and no space: "12.5%". A change is a whole percentage with its
  sign, and a change that rounds to 0 reads "0%" (never "-0%"): :func:`fmt_change`.
- Bandwidth in GB/s is whole ("4,049"): its run-to-run spread is above 1 GB/s.
- A duration in us keeps 0.1 us (one decimal, e.g. "1,044.1"): durations are evidence, and the
  stages of a ladder differ by less than 1 %.
- Counts and values from 1000 up: whole, with thousands separators ("65,011,712").
- Smaller values: two decimals below 10 ("4.10", "1.06"), one below 1000 ("32.4"), three
  significant digits below 1 ("0.0123").
- Figures shown side by side (a table column, previous -> this stage) share their decimals:
  :func:`column_decimals` (a column of whole numbers stays whole: "32", "4", "16").
- A value with its unit pluralises a countable unit: "1 wavefront", "65,011,712 wavefronts",
  "4.10 wavefronts/inst": :func:`fmt_value`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

#: Units written with one decimal whatever the value: percentages and microseconds.
_ONE_DECIMAL = frozenset({"%", "us"})
#: Units written whole whatever the value.
_WHOLE = frozenset({"GB/s"})
#: Countable units that take an -s after a value other than 1 ("wavefront" -> "wavefronts").
_COUNTABLE = frozenset({"wavefront", "sector", "request", "warp", "thread", "block", "register", "byte", "cycle",
                        "launch", "conflict"})


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def natural_decimals(x: float, unit: str = "") -> int:
    """The decimals one value gets on its own (the module docstring's policy); ``x`` finite."""
    if unit in _ONE_DECIMAL:
        return 1
    if unit in _WHOLE:
        return 0
    ax = abs(x)
    if ax >= 1000 or x == int(x):
        return 0
    if ax >= 10:
        return 1
    if ax >= 1:
        return 2
    return min(6, 2 - math.floor(math.log10(ax)))  # three significant digits


def column_decimals(values: Iterable[Any], unit: str = "") -> int | None:
    """The decimals a column of figures shown side by side shares: the most any one of them needs,
    0 where every one is whole to within 0.1 % of its last digit, None when none is a finite number."""
    nums = [float(v) for v in values if not _missing(v) and not isinstance(v, str) and math.isfinite(float(v))]
    if not nums:
        return None
    if unit in _ONE_DECIMAL or unit in _WHOLE:
        return natural_decimals(nums[0], unit)
    if all(abs(v - round(v)) < 1e-9 * max(1.0, abs(v)) for v in nums):
        return 0
    return max(natural_decimals(v, unit) for v in nums)


def fmt(x: Any, unit: str = "", decimals: int | None = None) -> str:
    """One figure as the page shows it (the module docstring's policy); ``decimals`` (from
    :func:`column_decimals`) fixes the decimals of a figure shown beside others. The unit itself
    is not written, except "%"."""
    if _missing(x):
        return "not measured"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    d = natural_decimals(x, unit) if decimals is None else decimals
    text = f"{x:,.{d}f}"
    if text.lstrip("-").strip("0.,") == "":
        text = text.lstrip("-")  # "-0.0" is 0
    return text + ("%" if unit == "%" else "")


def fmt_change(rel: float) -> str:
    """A relative change as a whole signed percentage ("+35%", "-12%"); one that rounds to 0 is "0%"."""
    if _missing(rel):
        return ""
    pct = round(rel * 100)
    return "0%" if pct == 0 else f"{pct:+d}%"


def unit_text(unit: str, x: Any) -> str:
    """``unit`` as written after ``x``: a countable unit pluralised ("wavefronts", "wavefronts/inst")."""
    head, sep, tail = unit.partition("/")
    if head in _COUNTABLE and not (not _missing(x) and not isinstance(x, str) and float(x) == 1):
        head += "s"
    return head + sep + tail


def fmt_value(x: float | None, unit: str = "", decimals: int | None = None) -> str:
    """A figure with its unit: "65,011,712 wavefronts", "12.5%", "1,234.5 us", "1 wavefront";
    None or NaN -> "not measured"."""
    if _missing(x):
        return "not measured"
    text = fmt(x, unit, decimals)
    return text if unit in ("", "%") else f"{text} {unit_text(unit, x)}"


class Md(str):
    """Text that is Markdown already (made from :func:`md_text` / :func:`md_code` parts): a
    table cell takes it as it is."""


def md_text(text: Any) -> str:
    """Plain text for Markdown: ``&``, ``<`` and ``>`` as entities (GitHub renders raw HTML such as
    ``<img>``, ``<details>`` from a kernel name or label otherwise), line breaks folded to spaces."""
    folded = " ".join(str(text).split())
    return folded.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: Any) -> Md:
    """``text`` as a code span (shown literally, HTML included), fenced by one backtick more than
    its longest run of backticks, padded with a space where it starts or ends with one."""
    folded = " ".join(str(text).split())
    runs = [len(m) for m in re.findall(r"`+", folded)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if folded.startswith("`") or folded.endswith("`") else ""
    return Md(f"{fence}{pad}{folded}{pad}{fence}")


def md_cell(text: Any) -> str:
    """One GitHub-flavoured Markdown table cell: plain text through :func:`md_text` (an
    :class:`Md` as it is), ``|`` escaped (also inside code spans, as GFM tables need)."""
    cell = " ".join(text.split()) if isinstance(text, Md) else md_text(text)
    return cell.replace("|", "\\|")


def markdown_table(header: list[str], rows: list[list[Any]], align: list[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table (as ``$GITHUB_STEP_SUMMARY`` and PR comments show it).

    ``align`` gives one of "l", "r" per column (default: left).
    """
    marks = {"l": "---", "r": "---:"}
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |",
             "| " + " | ".join(marks[a] for a in (align or ["l"] * len(header))) + " |"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def text_table(header: list[str], rows: list[list[Any]]) -> str:
    """A plain-text table for a terminal, in the style of ``check``'s: columns padded to their
    widest cell, a dashed rule under the header, trailing spaces trimmed."""
    cells = [[str(c) for c in header], *([str(c) for c in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
