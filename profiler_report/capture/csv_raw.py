"""The raw-page CSV reader (``ncu --import R.ncu-rep --csv --page raw``): one row per launch."""

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
    check_header,
    check_row_width,
    check_unit,
    check_value,
    parse_number,
)
from profiler_report.capture.csv_details import is_details_header, parse_details_records
from profiler_report.capture.model import METRIC_COLUMNS, RULE_COLUMNS, Capture, _check_file, dedupe_metrics
from profiler_report.capture.units import is_mangled, normalize_unit, short_kernel_name
from profiler_report.errors import ReportUnreadableError
from profiler_report.metrics import NCU_BY_NAME


def read_csv(path: str | Path) -> Capture:
    """Read a raw-page CSV export into a :class:`Capture` (no rule results: the raw page has none).

    Accepts the units row under the header (id cells empty), thousands separators, per-kernel
    unit rescaling, missing-value markers, unknown or reordered columns, quoted kernel names
    with commas, and any amount of program output before the header. Columns are looked up by
    header name.

    Raises:
        ReportUnreadableError: the file is missing, empty or not a regular file, has no
            ``ID``/``Kernel Name`` header, or no kernel row parses; or it would be misread: a
            header naming a column twice, no units row, a unit that is unknown or wrong for its
            metric, a kernel row whose cell count differs from the header's, a value that is
            infinite or (for a metric the registry reads) negative.
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
    records, lines = _csv_records(text, path)
    h = _find_header(records)
    if h < 0:
        raise ReportUnreadableError(f"{path} has no ncu CSV header (no 'ID' and 'Kernel Name' columns)",
                                    "export with `ncu --import R.ncu-rep --csv --page raw > R.csv`")
    header = records[h]
    check_header(header, path)
    if is_details_header(header):
        return parse_details_records(records, h, path, lines)
    body, body_lines = records[h + 1:], lines[h + 1:]
    if not body or not _is_units_row(body[0], header):
        raise ReportUnreadableError(
            f"{path}: no units row under the header (line {lines[h] + 1} is not one): without it 271.008 us would "
            "read as 271.008 ns and 80 Mbyte as 80 bytes",
            "export with `ncu --import R.ncu-rep --csv --page raw`, which writes the units row")
    units = body[0]
    check_row_width(units, (len(header),), body_lines[0], "the units row", path)
    metric_cols = _metric_columns(header)
    for i in metric_cols:
        check_unit(header[i], units[i], f"units row, column {header[i]!r}", path)
    col = {name: i for i, name in enumerate(header)}
    keys = _LaunchKeys()
    pending = []
    for rec, line in zip(body[1:], body_lines[1:], strict=True):
        key = _launch_key(rec, col)
        if key is not None:
            check_row_width(rec, (len(header),), line, _row_name(rec, col), path)
            keys.add(key)
            pending.append((key, rec, line))
    rows: list[dict[str, Any]] = []
    for key, rec, line in pending:
        rows.extend(_csv_row(rec, header, units, metric_cols, col, keys.resolve(key), f"line {line} "
                             f"({_row_name(rec, col)})", path))
    if not rows:
        raise ReportUnreadableError(f"{path}: no kernel row could be parsed",
                                    "check the file is an unedited `ncu --csv --page raw` export")
    metrics = dedupe_metrics(pd.DataFrame(rows, columns=METRIC_COLUMNS))
    return Capture(metrics, pd.DataFrame(columns=RULE_COLUMNS), path, "csv", _csv_device(records, h, col),
                   notes=keys.notes())


def _row_name(rec: list[str], col: dict[str, int]) -> str:
    """'ID 2, transpose_padded': how an error names a kernel row."""
    return f"ID {_cell(rec, col, 'ID')}, {short_kernel_name(_cell(rec, col, 'Kernel Name')) or 'no kernel name'}"


def _metric_columns(header: list[str]) -> list[int]:
    """Indices of the metric columns: ncu metric names have no spaces; the others describe the launch."""
    return [i for i, name in enumerate(header) if name not in CSV_ID_COLUMNS and _METRIC_NAME.match(name)]


def _is_units_row(rec: list[str], header: list[str]) -> bool:
    try:
        return not rec[header.index("ID")].strip() and not rec[header.index("Kernel Name")].strip()
    except (ValueError, IndexError):
        return False


def _csv_row(rec: list[str], header: list[str], units: list[str], metric_cols: list[int], col: dict[str, int],
             launch_id: int, where: str, path: Path) -> list[dict]:
    """The metric rows (METRIC_COLUMNS) of one kernel row, in base units.

    Raises:
        ReportUnreadableError: a cell of a metric the registry reads is text, or a value is
            infinite or impossible (:func:`check_value`).
    """
    demangled = _cell(rec, col, "Kernel Name")
    base = {
        "launch_id": launch_id,
        "kernel": short_kernel_name(demangled),
        "demangled": demangled,
        "mangled": demangled if is_mangled(demangled) else "",
        "nvtx_range": _csv_nvtx(rec, header),
        "grid": _cell(rec, col, "Grid Size"),
        "block": _cell(rec, col, "Block Size"),
    }
    out = []
    for i in metric_cols:
        metric = header[i]
        try:
            raw = parse_number(rec[i])
        except ValueError:
            if metric in NCU_BY_NAME:  # text where a count, size or time must be
                raise ReportUnreadableError(f"{path}: {where}: {metric} = {rec[i].strip()!r} is not a number",
                                            "re-export the capture unedited") from None
            continue  # a text-valued metric (names, enums)
        if math.isnan(raw):
            continue  # missing stays missing
        value, unit = normalize_unit(raw, units[i])
        check_value(metric, value, rec[i], where, path)
        out.append({**base, "metric": metric, "value": value, "unit": unit})
    return out


def _looks_like_csv(head: bytes) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text.startswith((b'"ID"', b"ID,", b'"==PROF==', b"==PROF==")) or b'"Kernel Name"' in text
