"""Parsing compute-sanitizer's output (pure: CPU tests run it on real H200 output,
tests/data/sanitizer/); :mod:`profiler_report.live.sanitizer` runs the tools and explains the markers."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: What starts every line compute-sanitizer itself prints.
PREFIX = "========="
#: Marker lines the child prints before and after each stage (followed by one JSON object).
BEGIN = "profiler-report-sanitize-begin "
END = "profiler-report-sanitize-end "

#: Header lines of the tool that are not findings: the banner, the totals, and the child's exit
#: status (known from the process itself; the stage it stopped in is found by its markers).
_NOT_FINDINGS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                 "Target application returned an error", "Error: process didn't terminate successfully")
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")
_RACECHECK_SUMMARY = re.compile(r"RACECHECK SUMMARY:.*?\((\d+)\s+error")
#: A report block's device location: ``at KERNEL+0x1a0`` or ``at 0x1a0 in KERNEL`` (never the
#: host backtrace's "... entry point at kernel launch time").
_AT = re.compile(r"\bat (?:0x[0-9a-fA-F]+ in (?P<bare>\S+)|(?P<name>\S.*?)\+0x[0-9a-fA-F]+)")


@dataclass
class Finding:
    """One report block of a tool: its first line (``text``, without the prefix), the kernel it
    names (``kernel``, "" when none) and the stage it is attributed to (None: a kernel that is
    none of the stages', e.g. CuPy's own). ``severity`` is "warning" for racecheck's warnings."""

    tool: str
    stage: str | None
    text: str
    kernel: str = ""
    severity: str = "error"


@dataclass
class ToolOutput:
    """One tool process's output, parsed: ``errors`` from its ``ERROR SUMMARY`` (racecheck:
    ``RACECHECK SUMMARY``) line, None when the line is missing (the tool did not finish);
    ``begun``: the stages whose begin marker was printed, in order; ``ended``: stage -> the
    child's end record (``correct``, ``message``); ``tool_errors``: the tool's own failures."""

    tool: str
    errors: int | None = None
    findings: list[Finding] = field(default_factory=list)
    begun: list[str] = field(default_factory=list)
    ended: dict[str, dict[str, Any]] = field(default_factory=dict)
    kernels: dict[str, list[str]] = field(default_factory=dict)
    tool_errors: list[str] = field(default_factory=list)


def kernel_key(name: str) -> str:
    """A kernel name reduced to what tells instantiations apart, so that NVRTC's name expression
    (``transpose_vec_tuned<float,16,16,256>``) and the tool's demangled name (``void
    transpose_vec_tuned<float, (int)16, (int)16, (int)256>(const float *, ...)``) compare equal:
    no return type, no parameter list, no integer casts or suffixes, no spaces."""
    s = re.sub(r"^\s*void\s+", "", name)
    depth, end = 0, len(s)
    for i, ch in enumerate(s):
        depth += (ch == "<") - (ch == ">")
        if ch == "(" and depth == 0:
            end = i
            break
    s = s[:end]
    s = re.sub(r"\((?:unsigned |signed )?(?:int|long|short|char|bool|long long)\)", "", s)
    s = re.sub(r"(?<=\d)[uUlL]+\b", "", s)
    return re.sub(r"\s+", "", s)


def _identifier(expr: str) -> str:
    return kernel_key(expr).split("<", 1)[0]


def _candidates(name: str, kernels: dict[str, list[str]]) -> list[str]:
    """Stages that launch the kernel ``name`` (demangled, or mangled: ``_Z16transpose_padded...``)."""
    key = kernel_key(name)
    exact = [s for s, ks in kernels.items() if any(kernel_key(k) == key for k in ks)]
    if exact:
        return exact
    if name.startswith("_Z"):  # not demangled: Itanium mangling writes an identifier as <length><name>
        return [s for s, ks in kernels.items() if any(f"{len(_identifier(k))}{_identifier(k)}" in name for k in ks)]
    return [s for s, ks in kernels.items() if any(_identifier(k) == key.split("<", 1)[0] for k in ks)]


def _attribute(block: list[str], kernels: dict[str, list[str]], current: str | None) -> tuple[str | None, str]:
    """(stage, kernel) of one report block: the stage that launches the kernel it names (the
    current section's stage among several), the current section's stage when it names none."""
    for line in block:
        m = _AT.search(line)
        if not m:
            continue
        name = (m.group("name") or m.group("bare")).strip()
        stages = _candidates(name, kernels)
        if not stages:
            return None, name
        return (current if current in stages else stages[0]), name
    return current, ""


def _marker(line: str, marker: str) -> dict[str, Any] | None:
    at = line.find(marker)
    if at < 0:
        return None
    try:
        data = json.loads(line[at + len(marker):])
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("stage"), str) else None


def _blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """The tool's report blocks as (index of the header line, [header, indented lines...])."""
    out: list[tuple[int, list[str]]] = []
    for i, raw in enumerate(lines):
        if not raw.startswith(PREFIX):
            continue
        rest = raw[len(PREFIX):]
        if rest.strip() == "":
            continue
        if rest.startswith(" ") and not rest.startswith("  "):  # a header: one space, then text
            out.append((i, [rest.strip()]))
        elif out:
            out[-1][1].append(rest.strip())
    return out


def parse_output(tool: str, text: str) -> ToolOutput:
    """Parse one tool process's combined stdout and stderr (see the module docstring)."""
    lines = text.splitlines()
    res = ToolOutput(tool)
    section: dict[int, str | None] = {}
    current: str | None = None
    for i, line in enumerate(lines):
        begin, end = _marker(line, BEGIN), _marker(line, END)
        if begin:
            current = begin["stage"]
            res.begun.append(current)
            res.kernels[current] = [str(k) for k in begin.get("kernels", [])]
        elif end:
            res.ended[end["stage"]] = end
        section[i] = current
        for rx in (_ERROR_SUMMARY, _RACECHECK_SUMMARY):
            m = rx.search(line) if line.startswith(PREFIX) else None
            if m and res.errors is None:
                res.errors = int(m.group(1))
    for i, block in _blocks(lines):
        head = block[0]
        if head.startswith(_NOT_FINDINGS):
            continue
        if "Internal Sanitizer Error" in head or head.startswith(("Error: No attachable process",
                                                                  "Error: Target application terminated before")):
            res.tool_errors.append(head)
            continue
        stage, kernel = _attribute(block, res.kernels, section.get(i))
        severity = "warning" if head.lower().startswith("warning") else "error"
        res.findings.append(Finding(tool, stage, _first_line(block), kernel, severity))
    return res


def _first_line(block: list[str]) -> str:
    """A block's header with its location (memcheck and synccheck put it on the next line)."""
    head = block[0]
    if " at " in head or len(block) < 2 or not block[1].startswith("at "):
        return head
    return f"{head} ({block[1]})"
