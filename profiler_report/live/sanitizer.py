"""NVIDIA compute-sanitizer as a correctness gate: every stage once under memcheck, racecheck and
synccheck at a small size that is not a multiple of any tile, before timing.

One child process per tool (``compute-sanitizer --tool T python -m profiler_report.live.target
sanitize ...``) runs every stage of the case once, validated as usual (random input, poisoned
output, compared with the reference), at :meth:`~profiler_report.model.base.Case.sanitize_size`.
The child prints a begin and an end marker line per stage (:data:`BEGIN`, :data:`END`: JSON with
the stage id and the kernels its steps launch). The tool's own lines start with
:data:`PREFIX`; each report block (a header line, then indented lines) is attributed to a stage by
the kernel it names (its ``at KERNEL+0x...`` location), else to the stage whose section it falls
in. A stage the child did not finish (a crash, a sticky CUDA error) is a finding of that tool,
and the stages after it run again in a fresh child.

:func:`parse_output` is pure (CPU tests run it on real H200 output, tests/data/sanitizer/);
:func:`sanitize` drives the children (GPU). The result is ``sanitizer.json`` in the report
folder (:data:`SCHEMA`) plus each tool's raw output as ``sanitizer-<tool>.log``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from profiler_report.errors import SanitizerNotFoundError
from profiler_report.live.ncu import find_executable

#: The tools every stage runs under, in order.
TOOLS = ("memcheck", "racecheck", "synccheck")
#: What starts every line compute-sanitizer itself prints.
PREFIX = "========="
#: Marker lines the child prints before and after each stage (followed by one JSON object).
BEGIN = "profiler-report-sanitize-begin "
END = "profiler-report-sanitize-end "
SCHEMA = "profiler-report.sanitizer/1"

#: Where the CUDA toolkit installs compute-sanitizer when it is not on PATH (newest first).
SANITIZER_GLOBS = (
    "/usr/local/cuda/bin/compute-sanitizer",
    "/usr/local/cuda-*/bin/compute-sanitizer",
    "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
    "/opt/nvidia/compute-sanitizer/compute-sanitizer",
)

#: Header lines of the tool that are not findings: the banner, the totals, and the child's exit
#: status (known from the process itself; the stage it stopped in is found by its markers).
_NOT_FINDINGS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                 "Target application returned an error", "Error: process didn't terminate successfully")
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")
_RACECHECK_SUMMARY = re.compile(r"RACECHECK SUMMARY:.*?\((\d+)\s+error")
#: A report block's device location: ``at KERNEL+0x1a0`` or ``at 0x1a0 in KERNEL`` (never the
#: host backtrace's "... entry point at kernel launch time").
_AT = re.compile(r"\bat (?:0x[0-9a-fA-F]+ in (?P<bare>\S+)|(?P<name>\S.*?)\+0x[0-9a-fA-F]+)")


def find_sanitizer(env: dict[str, str] | None = None, globs: Sequence[str] | None = None) -> str | None:
    """Path of ``compute-sanitizer``: $COMPUTE_SANITIZER, PATH, $CUDA_HOME/bin, ``globs`` (default
    :data:`SANITIZER_GLOBS`; the way :func:`profiler_report.live.ncu.find_ncu` looks for ncu);
    None when none holds one."""
    return find_executable("compute-sanitizer", "COMPUTE_SANITIZER", env,
                           SANITIZER_GLOBS if globs is None else globs)


NOT_FOUND = "compute-sanitizer not found on PATH, $COMPUTE_SANITIZER, $CUDA_HOME/bin or /usr/local/cuda*/bin"


def resolve(wanted: bool | None, env: dict[str, str] | None = None) -> tuple[str | None, str]:
    """(the compute-sanitizer to run, or None; why not) for ``run --sanitize/--no-sanitize``:
    ``wanted`` None (the default) runs it where it exists.

    Raises:
        SanitizerNotFoundError: ``--sanitize`` was asked for and no compute-sanitizer exists.
    """
    if wanted is False:
        return None, "off (--no-sanitize)"
    exe = find_sanitizer(env)
    if exe is None and wanted:
        raise SanitizerNotFoundError(f"--sanitize: {NOT_FOUND}",
                                     "install the CUDA toolkit's compute-sanitizer, set $COMPUTE_SANITIZER, "
                                     "or pass --no-sanitize")
    return exe, "" if exe else f"not available ({NOT_FOUND})"


# -- parsing ---------------------------------------------------------------------------------


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


# -- running ---------------------------------------------------------------------------------


def child_command(case_ref: str, size: dict[str, int], dtype: str, stages: Sequence[str]) -> list[str]:
    """The stage runner the tool wraps: ``python -m profiler_report.live.target sanitize``."""
    return [sys.executable, "-m", "profiler_report.live.target", "sanitize", "--case", case_ref,
            "--size", json.dumps(size, sort_keys=True), "--dtype", dtype, "--stages", ",".join(stages)]


def tool_argv(exe: str, tool: str, child: list[str]) -> list[str]:
    """compute-sanitizer's command line for one tool. API errors are not reported (CuPy probes
    the driver; a kernel's fault is reported as the kernel's own block); racecheck reports its
    analysis (one line per hazard pair)."""
    extra = ["--racecheck-report", "analysis"] if tool == "racecheck" else []
    return [exe, "--tool", tool, "--report-api-errors", "no", "--print-limit", "20", *extra, *child]


def _run(argv: list[str], timeout_s: float) -> tuple[str, int | None]:
    """(combined output, exit status; None when it ran past ``timeout_s`` and was stopped)."""
    from profiler_report.live.ncu import _kill  # the one way a tool's process group is stopped

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=max(1.0, timeout_s))
        return out, proc.returncode
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, _ = proc.communicate()
        return out or "", None
    except BaseException:  # Ctrl-C: its own session would keep it running on the GPU
        _kill(proc)
        raise


@dataclass
class ToolRun:
    """How one tool's runs went: ``status`` "ran", "timed out" or "failed"; ``errors`` summed
    over its processes (``ERROR SUMMARY``); ``processes``: children started (one, plus one more
    after each stage that stopped its child); ``seconds`` of wall time."""

    tool: str
    status: str = "ran"
    errors: int = 0
    processes: int = 0
    seconds: float = 0.0
    note: str = ""


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def run_tool(exe: str, tool: str, case_ref: str, size: dict[str, int], dtype: str, stages: Sequence[str],
             timeout_s: float, log: Path | None = None) -> tuple[ToolRun, list[ToolOutput]]:
    """Every stage once under ``tool``; a stage that stops its child (begun, not ended) is a
    finding, and the stages after it run in a fresh child, until all ran or ``timeout_s`` (the
    tool's whole budget) is spent. Each process's raw output is appended to ``log``."""
    run, outputs, todo = ToolRun(tool), [], list(stages)
    start = time.monotonic()
    while todo:
        left = timeout_s - (time.monotonic() - start)
        if left <= 0:
            run.status, run.note = "timed out", f"budget of {timeout_s:.0f} s spent; not run: {', '.join(todo)}"
            break
        text, rc = _run(tool_argv(exe, tool, child_command(case_ref, size, dtype, todo)), left)
        run.processes += 1
        if log is not None:
            with log.open("a", encoding="utf-8") as fh:
                fh.write(text)
        out = parse_output(tool, text)
        outputs.append(out)
        run.errors += out.errors or 0
        stuck = [s for s in out.begun if s not in out.ended]
        if rc is None:
            where = f" in stage {stuck[0]}" if stuck else ""
            run.status, run.note = "timed out", f"stopped after {timeout_s:.0f} s{where}"
            for s in stuck:
                out.findings.append(Finding(tool, s, f"did not finish under {tool} within {timeout_s:.0f} s"))
            break
        if stuck:
            s = stuck[0]
            out.findings.append(Finding(tool, s, f"the child stopped in this stage (exit {rc}): {_last_line(text)}"))
        done = set(out.ended) | set(stuck)
        if not out.begun or not done:  # nothing ran: the child or the tool itself failed
            run.status, run.note = "failed", f"exit {rc}: {_last_line(text)}"
            break
        todo = [s for s in todo if s not in done]
    run.seconds = round(time.monotonic() - start, 1)
    return run, outputs


def stage_results(stages: Sequence[str], tools: Sequence[str], runs: dict[str, ToolRun],
                  outputs: dict[str, list[ToolOutput]]) -> list[dict[str, Any]]:
    """One record per stage: each tool's result ("clean", "not run (...)" or its first finding),
    the small-size validation ("correct" or the mismatch), ``correct`` (no error finding, a
    correct output), ``first`` (the first finding, "tool: line"; "" when none) and ``checked``
    (every tool ran the stage: a stage never run is not called clean)."""
    out = []
    for sid in stages:
        rec: dict[str, Any] = {"stage": sid}
        first, validation, checked = "", "", True
        for tool in tools:
            outs = outputs.get(tool, [])
            found = [f for o in outs for f in o.findings if f.stage == sid and f.severity == "error"]
            warned = [f for o in outs for f in o.findings if f.stage == sid and f.severity == "warning"]
            ended = next((o.ended[sid] for o in outs if sid in o.ended), None)
            if found:
                rec[tool] = found[0].text
                first = first or f"{tool}: {found[0].text}"
            elif ended is None:
                checked = False
                rec[tool] = f"not run ({runs[tool].status}{': ' + runs[tool].note if runs[tool].note else ''})"
            else:
                rec[tool] = "clean" + (f" ({len(warned)} warning(s): {warned[0].text})" if warned else "")
            if ended is not None and not validation:
                validation = "correct" if ended.get("correct") else str(ended.get("message", "wrong"))
        rec["validation"] = validation = validation or "not run"
        if not first and validation not in ("correct", "not run"):
            first = f"validation: {validation}"
        rec["correct"], rec["first"], rec["checked"] = not first, first, checked
        out.append(rec)
    return out


def sanitize(exe: str, case_ref: str, size: dict[str, int], size_text: str, dtype: str, stages: Sequence[str],
             timeout_s: float, folder: Path | None = None, tools: Sequence[str] = TOOLS) -> dict[str, Any]:
    """Run every stage under each tool (GPU): ``sanitizer.json``'s content (:data:`SCHEMA`).

    Keys: ``schema``, ``tool`` (its path), ``version``, ``tools`` (a :class:`ToolRun` per tool),
    ``size`` (the case's dimensions), ``size_text``, ``dtype``, ``stages``
    (:func:`stage_results`), ``other`` (findings in kernels that are none of the stages').
    Raw outputs go to ``folder/sanitizer-<tool>.log`` when ``folder`` is given.
    """
    from profiler_report.live.ncu import ncu_version  # `--version` parsed the same way as ncu's

    runs: dict[str, ToolRun] = {}
    outputs: dict[str, list[ToolOutput]] = {}
    for tool in tools:
        log = folder / f"sanitizer-{tool}.log" if folder is not None else None
        runs[tool], outputs[tool] = run_tool(exe, tool, case_ref, size, dtype, stages, timeout_s, log)
    other = [f"{f.tool}: {f.text}" + (f" (in {f.kernel})" if f.kernel else "")
             for outs in outputs.values() for o in outs for f in o.findings if f.stage is None]
    other += [f"{o.tool}: {e}" for outs in outputs.values() for o in outs for e in o.tool_errors]
    return {"schema": SCHEMA, "tool": exe, "version": ncu_version(exe), "tools": [asdict(r) for r in runs.values()],
            "size": dict(size), "size_text": size_text, "dtype": dtype,
            "stages": stage_results(stages, tools, runs, outputs), "other": other}
