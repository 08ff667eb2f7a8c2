"""A run's compute-sanitizer results (``sanitizer.json``, written by
:mod:`profiler_report.live.sanitizer`) as the report and the summary JSON state them.

Every function takes the sidecar's content, or None for a capture without one (recorded before
the sanitizer pass existed, made elsewhere, or ``run --no-sanitize``): that reads "not run".
"""

from __future__ import annotations

from typing import Any

NOT_RUN = "not run"


def _tools(doc: dict[str, Any]) -> list[str]:
    return [str(t.get("tool", "?")) for t in doc.get("tools", [])]


def bad_stages(doc: dict[str, Any] | None) -> list[str]:
    """The stages with a finding (an error report block, a stopped child, a wrong output)."""
    return [s["stage"] for s in (doc or {}).get("stages", []) if not s["correct"]]


def sanitizer_text(doc: dict[str, Any] | None, why_not: str = "") -> str:
    """The provenance line: tool version, tools, size and dtype, and the outcome, e.g.
    ``compute-sanitizer 2025.3.1.0: memcheck, racecheck, synccheck at 67x133 float32: all 10
    stages clean``; ``why_not`` (or "not run") without results."""
    if doc is None:
        return why_not or NOT_RUN
    tools = ", ".join(f"{t['tool']}{'' if t.get('status') == 'ran' else ' (' + str(t.get('status')) + ')'}"
                      for t in doc["tools"])
    bad, n = bad_stages(doc), len(doc["stages"])
    unchecked = [s["stage"] for s in doc["stages"] if s["correct"] and not s.get("checked", True)]
    outcome = f"findings in {len(bad)} of {n} stages ({', '.join(bad)})" if bad else \
        f"all {n} stages clean" if not unchecked else f"no findings in {n - len(unchecked)} of {n} stages"
    if unchecked:
        outcome += f"; not checked by every tool: {', '.join(unchecked)}"
    version = f" {doc['version']}" if doc.get("version") and doc["version"] != "unknown" else ""
    return f"compute-sanitizer{version}: {tools} at {doc['size_text']} {doc['dtype']}: {outcome}"


def stage_text(doc: dict[str, Any] | None, stage: str) -> str:
    """One stage's line: each tool's result ("memcheck clean, racecheck: Error: Race reported
    ..., synccheck clean") and the size; "not run" without results or for a stage not in them."""
    rec = next((s for s in (doc or {}).get("stages", []) if s["stage"] == stage), None)
    if doc is None or rec is None:
        return NOT_RUN
    parts = [f"{t} {rec[t]}" if rec.get(t) == "clean" or str(rec.get(t, "")).startswith("not run")
             else f"{t}: {rec.get(t, NOT_RUN)}" for t in _tools(doc)]
    if rec.get("validation") not in (None, "correct", NOT_RUN):
        parts.append(f"output at this size: {rec['validation']}")
    return f"{'; '.join(parts)} (at {doc['size_text']} {doc['dtype']})"


def summary_entry(doc: dict[str, Any] | None) -> dict[str, Any]:
    """The ``sanitizer`` key of the summary JSON: ``result`` ("clean", "findings" or "not run"),
    and with results the tool's ``version``, ``tools`` (each with its status and error count),
    ``size_text``, ``dtype``, ``stages`` (stage, correct, first finding, each tool's result) and
    ``other`` (findings in kernels that are none of the stages')."""
    if doc is None:
        return {"result": NOT_RUN}
    keep = ("version", "tools", "size", "size_text", "dtype", "stages", "other")
    return {"result": "findings" if bad_stages(doc) else "clean", **{k: doc[k] for k in keep if k in doc}}
