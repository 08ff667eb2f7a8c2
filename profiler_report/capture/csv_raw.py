"""raw CSV."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from profiler_report.capture.csv_common import (
    _METRIC_NAME,
    CSV_ID_COLUMNS,
    _cell,
    _csv_device,
    _csv_nvtx,
    _csv_records,
    _find_header,
    _launch_key,
    _LaunchKeys,
    parse_number,
)
from profiler_report.capture.csv_details import is_details_header, parse_details_records
from profiler_report.capture.model import METRIC_COLUMNS, RULE_COLUMNS, Capture, _check_file, dedupe_metrics
from profiler_report.capture.units import normalize_unit, short_kernel_name
from profiler_report.errors import ReportUnreadableError


def read_csv(path: str | Path) -> Capture:
    """Read a raw-page CSV export into a :class:`Capture` (no rule results: the raw page has none).

    Accepts the units row under the header (id cells empty), thousands separators, per-kernel
    unit rescaling, missing-value markers, unknown or reordered columns, and quoted kernel names
    with commas. Columns are looked up by header name.

    Raises:
        ReportUnreadableError: the file is missing or empty, has no ``ID``/``Kernel Name`` header,
            or no kernel row parses.
    """
    path = Path(path)
    _check_file(path)
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except (UnicodeDecodeError, OSError) as exc:
        raise ReportUnreadableError(f"{path} is not a text CSV export ({exc.__class__.__name__})") from exc
    return parse_csv_text(text, path)


def parse_csv_text(text: str, path: Path = Path("<csv>")) -> Capture:
    """Parse the text of a CSV export; see :func:`read_csv`.

    The raw page (``--page raw``: one row per launch, one column per metric) and the details page
    (``--page details``: one row per launch and section metric, see :func:`parse_details_records`)
    are told apart by their header.

    Raises:
        ReportUnreadableError: no ncu header, or no kernel row parses. Never anything else.
    """
    text = text.lstrip("\ufeff")  # a byte-order mark some spreadsheet tools add
    records = _csv_records(text, path)
    h = _find_header(records)
    if h < 0:
        raise ReportUnreadableError(f"{path} has no ncu CSV header (no 'ID' and 'Kernel Name' columns)",
                                    "export with `ncu --import R.ncu-rep --csv --page raw > R.csv`")
    header = records[h]
    if is_details_header(header):
        return parse_details_records(records, h, path)
    body = records[h + 1:]
    units: list[str] = [""] * len(header)
    if body and _is_units_row(body[0], header):
        units = (body[0] + [""] * len(header))[: len(header)]
        body = body[1:]
    col = {name: i for i, name in reversed(list(enumerate(header)))}  # first occurrence wins
    keys = _LaunchKeys()
    pending = []
    for rec in body:
        key = _launch_key(rec, col, len(header))
        if key is not None:
            keys.add(key)
            pending.append((key, rec))
    rows: list[dict[str, Any]] = []
    for key, rec in pending:
        rows.extend(_csv_row(rec, header, units, col, keys.resolve(key)))
    if not rows:
        raise ReportUnreadableError(f"{path}: no kernel row could be parsed",
                                    "check the file is an unedited `ncu --csv --page raw` export")
    metrics = dedupe_metrics(pd.DataFrame(rows, columns=METRIC_COLUMNS))
    return Capture(metrics, pd.DataFrame(columns=RULE_COLUMNS), path, "csv", _csv_device(records, h, col),
                   notes=keys.notes())


def _is_units_row(rec: list[str], header: list[str]) -> bool:
    try:
        return not rec[header.index("ID")].strip() and not rec[header.index("Kernel Name")].strip()
    except (ValueError, IndexError):
        return False


def _csv_row(rec: list[str], header: list[str], units: list[str], col: dict[str, int], launch_id: int) -> list[dict]:
    demangled = _cell(rec, col, "Kernel Name")
    base = {
        "launch_id": launch_id,
        "kernel": short_kernel_name(demangled),
        "demangled": demangled,
        "nvtx_range": _csv_nvtx(rec, header),
        "grid": _cell(rec, col, "Grid Size"),
        "block": _cell(rec, col, "Block Size"),
    }
    out = []
    seen: set[str] = set()
    for i, name in enumerate(header):
        if name in CSV_ID_COLUMNS or i >= len(rec) or not _METRIC_NAME.match(name):
            continue  # ncu metric names have no spaces; other columns describe the launch
        metric = name
        if metric in seen:
            continue
        try:
            raw = parse_number(rec[i])
        except ValueError:
            continue  # a text-valued metric (names, enums)
        if math.isnan(raw):
            continue  # missing stays missing
        value, unit = normalize_unit(raw, units[i])
        seen.add(metric)
        out.append({**base, "metric": metric, "value": value, "unit": unit})
    return out


def _looks_like_csv(head: bytes) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text.startswith((b'"ID"', b"ID,", b'"==PROF==', b"==PROF==")) or b'"Kernel Name"' in text
