"""The gate's results written out: the plain-text table, JSON for scripts, JUnit XML and
GitHub-flavoured Markdown for CI.

Last step of the gate, after :mod:`.evaluate`; ``profiler-report check`` prints
:func:`results_table` and :func:`results_summary` (or :func:`results_json` under ``--json``) and
writes :func:`write_junit` under ``--junit``. Numbers are formatted by
:func:`~profiler_report.analysis.compare.fmt_value`, as ``diff`` formats them.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from profiler_report.analysis.compare import fmt_value
from profiler_report.errors import InputError
from profiler_report.gate.evaluate import counts
from profiler_report.gate.rules import Result
from profiler_report.util.fmt import Md, markdown_table, md_code, md_text
from profiler_report.util.fsio import atomic_write


def results_table(results: list[Result]) -> str:
    """Plain-text table: stage, rule, measured (with ``(ncu)`` or ``(computed)`` where the value
    has a fallback formula: :attr:`Result.source`), limit, verdict."""
    head = ("stage", "rule", "measured", "limit", "verdict")
    rows = [(r.stage, r.rule, _measured(r), fmt_value(r.limit, r.unit) if not math.isnan(r.limit) else "-",
             r.verdict.upper() if r.verdict == "fail" else r.verdict) for r in results]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
             for row in (head, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _measured(r: Result) -> str:
    if r.verdict == "skipped":
        return "-"
    text = fmt_value(r.measured, r.unit)
    return f"{text} ({r.source})" if r.source and not math.isnan(r.measured) else text


def results_summary(results: list[Result], missing: str) -> list[str]:
    """Lines after the table: one per failing / unmeasured rule, then the totals."""
    lines = []
    for r in results:
        if r.verdict == "fail":
            lines.append(f"FAIL {r.stage}: {r.rule}: {r.message}")
        elif r.verdict == "not measured":
            lines.append(f"{'FAIL' if missing == 'fail' else 'warn'} (not measured) {r.stage}: {r.rule}: {r.message}")
    c = counts(results)
    lines.append(f"check: {c['pass']} passed, {c['fail']} failed, {c['not measured']} not measured"
                 f"{' (counted as failures: --missing fail)' if missing == 'fail' and c['not measured'] else ''}, "
                 f"{c['skipped']} skipped")
    return lines


def results_markdown(results: list[Result], missing: str, capture: str, thresholds: str) -> str:
    """GitHub-flavoured Markdown for ``$GITHUB_STEP_SUMMARY``: a heading with the outcome, the
    totals line of :func:`results_summary`, and one table row per rule and stage (the rows of
    :func:`results_table`, with the reason for every verdict but a pass)."""
    failed = any(r.verdict == "fail" or (r.verdict == "not measured" and missing == "fail") for r in results)
    rows = [[r.stage, md_code(r.rule), fmt_value(r.measured, r.unit) if r.verdict != "skipped" else "-",
             fmt_value(r.limit, r.unit) if not math.isnan(r.limit) else "-",
             Md(f"**{r.verdict.upper()}**") if r.verdict == "fail" else r.verdict,
             r.message if r.verdict != "pass" else ""] for r in results]
    table = markdown_table(["stage", "rule", "measured", "limit", "verdict", "why"], rows,
                           ["l", "l", "r", "r", "l", "l"])
    return (f"### profiler-report check: {'FAILED' if failed else 'passed'}\n\n"
            f"{md_code(capture)} against {md_code(thresholds)}: "
            f"{md_text(results_summary(results, missing)[-1].removeprefix('check: '))}"
            f"\n\n{table}\n")


def _json_num(x: float) -> float | None:
    """NaN and infinities -> None (JSON has no such numbers)."""
    return None if isinstance(x, float) and not math.isfinite(x) else x


def results_json(results: list[Result], **meta: Any) -> dict[str, Any]:
    """JSON-ready dict: ``meta`` (capture, thresholds, baseline, ...), results, counts. Each
    result's ``source`` is "ncu" or "computed" for a metric with a fallback formula, else null."""
    return {**meta, "counts": counts(results),
            "results": [{"stage": r.stage, "rule": r.rule, "metric": r.metric, "measured": _json_num(r.measured),
                         "limit": _json_num(r.limit), "unit": r.unit, "verdict": r.verdict, "message": r.message,
                         "source": r.source or None}
                        for r in results]}


def junit_tree(results: list[Result], missing: str = "fail", name: str = "profiler-report check",
               properties: dict[str, str] | None = None) -> ET.ElementTree:
    """JUnit XML: one ``testcase`` per rule and stage; failures (and "not measured" under
    ``missing="fail"``) get a ``failure`` element, skipped and warned ones a ``skipped`` element;
    a value with a fallback formula gets a ``source`` property ("ncu" or "computed")."""
    c = counts(results)
    failures = c["fail"] + (c["not measured"] if missing == "fail" else 0)
    skipped = c["skipped"] + (c["not measured"] if missing != "fail" else 0)
    attrs = {"name": name, "tests": str(len(results)), "failures": str(failures), "errors": "0",
             "skipped": str(skipped)}
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", attrs)
    if properties:
        props = ET.SubElement(suite, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", {"name": k, "value": str(v)})
    for r in results:
        case = ET.SubElement(suite, "testcase", {"classname": f"profiler-report.{r.stage}", "name": r.rule})
        if r.source:  # where the value came from: ncu's metric, or computed from its inputs
            ET.SubElement(ET.SubElement(case, "properties"), "property", {"name": "source", "value": r.source})
        if r.verdict == "fail" or (r.verdict == "not measured" and missing == "fail"):
            el = ET.SubElement(case, "failure", {"message": r.message, "type": r.verdict.replace(" ", "-")})
            el.text = r.message
        elif r.verdict in ("skipped", "not measured"):
            ET.SubElement(case, "skipped", {"message": f"{r.verdict}: {r.message}"})
    _xml_safe(root)
    ET.indent(root)
    return ET.ElementTree(root)


#: Characters XML 1.0 does not allow (C0 controls but tab, LF and CR; surrogates; U+FFFE, U+FFFF):
#: ElementTree writes them as they are and every parser then refuses the whole file.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """``text`` with each character XML 1.0 forbids written as ``\\xNN`` / ``\\uNNNN`` (visible, and
    the name stays recognisable)."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _xml_safe(root: ET.Element) -> None:
    """Every attribute and text node under ``root`` made writable as well-formed XML 1.0."""
    for el in root.iter():
        el.attrib.update({k: _xml_text(v) for k, v in el.attrib.items()})
        if el.text:
            el.text = _xml_text(el.text)
        if el.tail:
            el.tail = _xml_text(el.tail)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place.

    Raises:
        InputError: the folder cannot be written.
    """
    path = Path(path)
    if not path.name or path.is_dir():
        raise InputError(f"cannot write {str(path) or repr('')}: not a file name",
                         "pass a file path, e.g. --junit check.xml")
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise InputError(f"cannot write {path} ({exc.strerror or exc})", "check the folder exists and is writable") \
            from exc


def _is_junit(path: Path) -> bool:
    """Whether the file at ``path`` starts as a JUnit report (an earlier ``--junit`` output)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith((b"<?xml", b"<testsuite")) and b"<testsuite" in head


def write_junit(path: Path, results: list[Result], missing: str = "fail",
                properties: dict[str, str] | None = None) -> None:
    """Write :func:`junit_tree` to ``path`` atomically (UTF-8, with an XML declaration).

    Raises:
        InputError: ``path`` is an existing file that is not a JUnit report (the capture being
            checked, a report's page or sidecar: never overwritten), or cannot be written.
    """
    if path.is_file() and not _is_junit(path):
        raise InputError(f"--junit {path} is an existing file that is not a JUnit report: not overwritten",
                         "pass --junit a new path, e.g. --junit junit.xml")
    root = junit_tree(results, missing, properties=properties).getroot()
    assert root is not None  # junit_tree builds a <testsuites> root
    write_atomic(path, ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n")
