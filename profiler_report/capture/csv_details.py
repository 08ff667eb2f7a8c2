"""The details-page CSV reader (``ncu --import R.ncu-rep --csv --page details``): one row per
launch and section entry."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from profiler_report.capture.csv_common import (
    _cell,
    _csv_device,
    _csv_nvtx,
    _csv_records,
    _find_header,
    _launch_key,
    _LaunchKeys,
    check_row_width,
    check_unit,
    check_value,
    parse_number,
)
from profiler_report.capture.model import METRIC_COLUMNS, RULE_COLUMNS, Capture, _check_file
from profiler_report.capture.units import clean_rule_text, is_mangled, normalize_unit, short_kernel_name
from profiler_report.errors import ReportUnreadableError
from profiler_report.metrics import DETAILS_TO_METRIC

#: Columns of :func:`details_table`: one row per (launch, section, metric) of the details page.
DETAILS_COLUMNS = ["launch_id", "section", "name", "value", "unit"]


#: Details-page entries that are an ncu metric under another name, keyed by (section, name);
#: checked value by value against the .ncu-rep of tests/data/h200_f32_4096. The details page
#: rounds to three or four significant digits, so these values are coarser than the raw page's.


_RULE_TYPES = {"OPT": "optimization", "WRN": "warning", "ERR": "error", "INF": "none", "OK": "ok"}


def is_details_header(header: list[str]) -> bool:
    """True for the details page: it has Section Name, Metric Name and Metric Value columns."""
    return {"Section Name", "Metric Name", "Metric Value"} <= set(header)


def details_key(section: str, name: str) -> str:
    """Metric name of a details-page entry: its ncu metric when known, else ``section: name``,
    so that 'Memory Throughput' of two sections stays two entries."""
    return DETAILS_TO_METRIC.get((section, name), f"{section}: {name}")


def parse_details_records(records: list[list[str]], h: int, path: Path, lines: list[int] | None = None) -> Capture:
    """A :class:`Capture` from the records of a details-page export whose header is ``records[h]``
    (``lines``: the file line of each record, for messages).

    Each (launch, section, metric) row becomes one metric (see :func:`details_key`), converted to
    base units with its own ``Metric Unit`` (units rescale per kernel: Mbyte for one launch,
    Gbyte for another). Rule rows (``Rule Name`` set) become ``rules``. Text values are skipped;
    'n/a' and friends stay missing.

    Raises:
        ReportUnreadableError: no row parses; or a row would be misread: its cell count is neither
            the header's nor that of ncu's shorter metric rows (cells up to ``Rule Name``), its
            unit is unknown or wrong for its metric, or its value is infinite or impossible.
    """
    header = records[h]
    lines = lines if lines is not None else list(range(1, len(records) + 1))
    widths = _row_widths(header)
    col = {name: i for i, name in enumerate(header)}
    keys = _LaunchKeys()
    pending = []
    for rec, line in zip(records[h + 1:], lines[h + 1:], strict=True):
        key = _launch_key(rec, col)
        if key is not None:
            check_row_width(rec, widths, line, f"ID {_cell(rec, col, 'ID')}", path)
            keys.add(key)
            pending.append((key, rec, line))
    rows: list[dict[str, Any]] = []
    rules: list[dict[str, Any]] = []
    for key, rec, line in pending:
        launch_id = keys.resolve(key)
        if _cell(rec, col, "Rule Name"):
            rules.append(_details_rule(rec, col, launch_id))
            continue
        row = _details_metric(rec, col, launch_id, f"line {line}", path)
        if row is not None:
            rows.append(row)
    if not rows:
        raise ReportUnreadableError(f"{path}: no metric row of the details page could be parsed",
                                    "check the file is an unedited `ncu --csv --page details` export")
    metrics = pd.DataFrame(rows, columns=METRIC_COLUMNS).drop_duplicates(["launch_id", "metric"])
    metrics = metrics.sort_values(["launch_id", "metric"]).reset_index(drop=True)
    return Capture(metrics, pd.DataFrame(rules, columns=RULE_COLUMNS), path, "csv-details",
                   _csv_device(records, h, col), notes=keys.notes())


def _row_widths(header: list[str]) -> tuple[int, ...]:
    """Cell counts a details-page row may have: the header's, and (ncu 2025.3.1 writes metric rows
    so) the cells up to and including ``Rule Name``."""
    if "Rule Name" in header:
        return (len(header), header.index("Rule Name") + 1)
    return (len(header),)


def _launch_base(rec: list[str], col: dict[str, int], launch_id: int) -> dict[str, Any]:
    demangled = _cell(rec, col, "Kernel Name")
    header = [""] * (max(col.values()) + 1)
    for name, i in col.items():
        header[i] = name
    return {"launch_id": launch_id, "kernel": short_kernel_name(demangled), "demangled": demangled,
            "mangled": demangled if is_mangled(demangled) else "",
            "nvtx_range": _csv_nvtx(rec, header), "grid": _cell(rec, col, "Grid Size"),
            "block": _cell(rec, col, "Block Size")}


def _details_metric(rec: list[str], col: dict[str, int], launch_id: int, where: str,
                    path: Path) -> dict[str, Any] | None:
    section, name = _cell(rec, col, "Section Name"), _cell(rec, col, "Metric Name")
    if not name:
        return None
    metric = details_key(section, name)
    cell = _cell(rec, col, "Metric Value")
    try:
        raw = parse_number(cell)
    except ValueError:
        return None  # a text value ("PolicySpread", "all")
    if math.isnan(raw):
        return None
    unit_cell = _cell(rec, col, "Metric Unit")
    check_unit(metric, unit_cell, f"{where} ({section}: {name})", path)
    value, unit = normalize_unit(raw, unit_cell)
    check_value(metric, value, cell, f"{where} ({section}: {name})", path)
    return {**_launch_base(rec, col, launch_id), "metric": metric, "value": value, "unit": unit}


def _details_rule(rec: list[str], col: dict[str, int], launch_id: int) -> dict[str, Any]:
    try:
        speedup = parse_number(_cell(rec, col, "Estimated Speedup"))
    except ValueError:
        speedup = math.nan
    rule_type = _cell(rec, col, "Rule Type")
    return {"launch_id": launch_id, "rule": _cell(rec, col, "Rule Name"), "section": _cell(rec, col, "Section Name"),
            "type": _RULE_TYPES.get(rule_type.upper(), rule_type.lower()), "title": _cell(rec, col, "Rule Name"),
            "message": clean_rule_text(_cell(rec, col, "Rule Description")), "speedup_pct": speedup,
            "speedup_type": _cell(rec, col, "Estimated Speedup Type")}


def details_table(path: str | Path) -> pd.DataFrame:
    """The metric rows of a details-page export as DETAILS_COLUMNS (section and name kept apart).

    Raises:
        ReportUnreadableError: not a readable details-page export.
    """
    path = Path(path)
    _check_file(path)
    try:
        records, _ = _csv_records(path.read_text(encoding="utf-8"), path)
    except (UnicodeDecodeError, OSError) as exc:
        raise ReportUnreadableError(f"{path} is not a text CSV export ({exc.__class__.__name__})") from exc
    h = _find_header(records)
    if h < 0 or not is_details_header(records[h]):
        raise ReportUnreadableError(f"{path} is not a details-page export",
                                    "export with `ncu --import R.ncu-rep --csv --page details > R.csv`")
    header = records[h]
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    out = []
    for rec in records[h + 1:]:
        key = _launch_key(rec, col)
        if key is None or _cell(rec, col, "Rule Name") or not _cell(rec, col, "Metric Name"):
            continue
        try:
            raw = parse_number(_cell(rec, col, "Metric Value"))
        except ValueError:
            continue
        value, unit = normalize_unit(raw, _cell(rec, col, "Metric Unit"))
        out.append({"launch_id": key[0], "section": _cell(rec, col, "Section Name"),
                    "name": _cell(rec, col, "Metric Name"), "value": value, "unit": unit})
    return pd.DataFrame(out, columns=DETAILS_COLUMNS)
