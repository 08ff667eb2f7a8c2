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
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from profiler_report.errors import SanitizerNotFoundError
from profiler_report.live.ncu import find_executable

# Re-exported: callers and tests know the parser's names as this module's.
from profiler_report.live.sanitizer_output import BEGIN as BEGIN
from profiler_report.live.sanitizer_output import END as END
from profiler_report.live.sanitizer_output import PREFIX as PREFIX
from profiler_report.live.sanitizer_output import Finding as Finding
from profiler_report.live.sanitizer_output import ToolOutput as ToolOutput
from profiler_report.live.sanitizer_output import _candidates as _candidates
from profiler_report.live.sanitizer_output import kernel_key as kernel_key
from profiler_report.live.sanitizer_output import parse_output as parse_output

#: The tools every stage runs under, in order.
TOOLS = ("memcheck", "racecheck", "synccheck")
SCHEMA = "profiler-report.sanitizer/1"

#: Where the CUDA toolkit installs compute-sanitizer when it is not on PATH (newest first).
SANITIZER_GLOBS = (
    "/usr/local/cuda/bin/compute-sanitizer",
    "/usr/local/cuda-*/bin/compute-sanitizer",
    "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
    "/opt/nvidia/compute-sanitizer/compute-sanitizer",
)

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


# -- running ---------------------------------------------------------------------------------


def child_command(case_ref: str, size: dict[str, int], dtype: str, stages: Sequence[str],
                  configs: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The stage runner the tool wraps: ``python -m profiler_report.live.target sanitize``
    (``configs``: stage id -> the template arguments chosen for the run's shape)."""
    return [sys.executable, "-m", "profiler_report.live.target", "sanitize", "--case", case_ref,
            "--size", json.dumps(size, sort_keys=True), "--dtype", dtype, "--stages", ",".join(stages),
            *(["--configs", json.dumps({k: list(v) for k, v in configs.items()})] if configs else [])]


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


@dataclass(frozen=True)
class SanitizeJob:
    """What every tool runs: compute-sanitizer ``exe`` on the stages ``stages`` (ids, in order) of
    the case ``case_ref`` at ``size`` (dimension -> elements) in ``dtype``; ``timeout_s``: seconds
    each tool may take in all; ``configs``: stage id -> the template arguments chosen for the shape."""

    exe: str
    case_ref: str
    size: dict[str, int]
    dtype: str
    stages: Sequence[str]
    timeout_s: float
    configs: dict[str, tuple[str, ...]] | None = None


def run_tool(job: SanitizeJob, tool: str, log: Path | None = None) -> tuple[ToolRun, list[ToolOutput]]:
    """Every stage once under ``tool``; a stage that stops its child (begun, not ended) is a
    finding, and the stages after it run in a fresh child, until all ran or ``job.timeout_s`` (the
    tool's whole budget) is spent. Each process's raw output is appended to ``log``."""
    exe, case_ref, size, dtype, timeout_s, configs = (job.exe, job.case_ref, job.size, job.dtype, job.timeout_s,
                                                      job.configs)
    run, outputs, todo = ToolRun(tool), [], list(job.stages)
    start = time.monotonic()
    while todo:
        left = timeout_s - (time.monotonic() - start)
        if left <= 0:
            run.status, run.note = "timed out", f"budget of {timeout_s:.0f} s spent; not run: {', '.join(todo)}"
            break
        text, rc = _run(tool_argv(exe, tool, child_command(case_ref, size, dtype, todo, configs)), left)
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


def sanitize(job: SanitizeJob, size_text: str, folder: Path | None = None, tools: Sequence[str] = TOOLS,
             progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
    """Run every stage under each tool (GPU): ``sanitizer.json``'s content (:data:`SCHEMA`).

    The tools run side by side, one child process each (they check correctness, not speed, so
    sharing the GPU changes no verdict); ``job.configs``: stage id -> the template arguments the run
    chose for its shape (:meth:`~profiler_report.model.base.Case.choose_configs`); ``progress(i, n,
    tool)`` is called as each tool finishes.

    Keys: ``schema``, ``tool`` (its path), ``version``, ``tools`` (a :class:`ToolRun` per tool),
    ``size`` (the case's dimensions), ``size_text``, ``dtype``, ``stages``
    (:func:`stage_results`), ``other`` (findings in kernels that are none of the stages').
    Raw outputs go to ``folder/sanitizer-<tool>.log`` when ``folder`` is given.
    """
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from profiler_report.live.ncu import ncu_version  # `--version` parsed the same way as ncu's

    def one(tool: str) -> tuple[ToolRun, list[ToolOutput]]:
        log = folder / f"sanitizer-{tool}.log" if folder is not None else None
        return run_tool(job, tool, log)

    done: dict[str, tuple[ToolRun, list[ToolOutput]]] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(tools))) as pool:
        futures = {pool.submit(one, t): t for t in tools}
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            if progress is not None:
                progress(len(done), len(tools), f"{futures[fut]} done")
    runs = {t: done[t][0] for t in tools}
    outputs = {t: done[t][1] for t in tools}
    other = [f"{f.tool}: {f.text}" + (f" (in {f.kernel})" if f.kernel else "")
             for outs in outputs.values() for o in outs for f in o.findings if f.stage is None]
    other += [f"{o.tool}: {e}" for outs in outputs.values() for o in outs for e in o.tool_errors]
    return {"schema": SCHEMA, "tool": job.exe, "version": ncu_version(job.exe),
            "tools": [asdict(r) for r in runs.values()], "size": dict(job.size), "size_text": size_text,
            "dtype": job.dtype, "stages": stage_results(job.stages, tools, runs, outputs), "other": other}
