"""What the raw-page and details-page CSV readers share: number cells, the header, launch keys,
and the checks that refuse a file rather than misread it (rows whose cell count differs from
the header, duplicate column names, units and values a metric cannot have)."""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any

from profiler_report.capture.units import known_unit, normalize_unit
from profiler_report.errors import ReportUnreadableError
from profiler_report.metrics import expected_unit_text, unit_fits, value_problem

#: Identifying columns of the raw page; every other column is a metric.
CSV_ID_COLUMNS = {
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit",
    "Metric Value", "Estimated Speedup", "Estimated Speedup Type", "Rule Name", "Rule Type",
    "Rule Description", "device__attribute_display_name",
}


_MISSING = {"", "nan", "n/a", "na", "no data", "none", "-", "--"}


_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?([eE][+-]?\d+)?$")


def parse_number(cell: str) -> float:
    """'16,252,928' -> 16252928.0; '0.5' -> 0.5; 'n/a' / 'no data' / '' -> NaN (missing, never 0).

    Raises:
        ValueError: the cell is text that is neither a number nor a missing marker.
    """
    text = cell.strip().strip('"')
    if text.lower() in _MISSING:
        return math.nan
    if _NUMBER.match(text):
        return float(text.replace(",", ""))
    return float(text)  # "inf", "1e5" and friends; ValueError for text


def _find_header(records: list[list[str]]) -> int:
    """Index of the ``ID`` ... ``Kernel Name`` header record, however much program output comes
    first (ncu prints the CSV after everything the profiled program printed); -1 when none."""
    for i, rec in enumerate(records):
        if "ID" in rec and "Kernel Name" in rec:
            return i
    return -1


#: The header line of an ncu CSV export, as ncu writes it: quoted ``"ID"`` first.
_HEADER_LINE = re.compile(r'^"ID","[^\n]*"Kernel Name"', re.M)


def _csv_records(text: str, path: Path) -> tuple[list[list[str]], list[int]]:
    """(records, the file line each record starts on). Parsing starts at ncu's header line when
    one is found, so that program output printed before it (an unbalanced quote, say) cannot
    swallow the header."""
    m = _HEADER_LINE.search(text)
    skipped = text.count("\n", 0, m.start()) if m else 0
    reader = csv.reader(io.StringIO(text[m.start():] if m else text))
    records, lines = [], []
    start = 1
    try:
        for rec in reader:
            records.append(rec)
            lines.append(skipped + start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise ReportUnreadableError(f"{path} is not valid CSV ({exc})") from exc
    return records, lines


def check_header(header: list[str], path: Path) -> None:
    """Refuse a header that names a column twice: which copy holds the metric cannot be told.

    Raises:
        ReportUnreadableError: a non-empty name occurs more than once.
    """
    seen: dict[str, int] = {}
    for i, name in enumerate(header):
        if name and name in seen:
            raise ReportUnreadableError(
                f"{path}: the header names column {name!r} twice (columns {seen[name] + 1} and {i + 1}); "
                "which one holds the metric cannot be told",
                "re-export the capture (`ncu --import R.ncu-rep --csv --page raw`) or delete the extra column")
        seen[name] = i


def check_row_width(rec: list[str], widths: tuple[int, ...], line: int, what: str, path: Path) -> None:
    """Refuse a kernel row whose cell count is none of ``widths`` (the header's, and for the
    details page the shorter metric rows ncu writes): a stray comma or an unquoted '16,252,928'
    shifts every cell to its right into the neighbouring column.

    Raises:
        ReportUnreadableError: naming the line and the launch (``what``).
    """
    if len(rec) not in widths:
        also = f" (or {widths[1]}, as ncu writes a metric row)" if len(widths) > 1 else ""
        raise ReportUnreadableError(
            f"{path}, line {line} ({what}): {len(rec)} cells where the header has {widths[0]}{also}; a stray comma "
            "or an unquoted number with thousands separators would move every value to its right into the wrong "
            "column, so the file is not read",
            "re-export the capture unedited (`ncu --import R.ncu-rep --csv --page raw`), or quote the cell")


def check_unit(metric: str, unit_cell: str, where: str, path: Path) -> None:
    """Refuse a unit the readers do not understand, or one that is not the unit the registry
    expects for ``metric`` (an empty unit cell on a time would read 271.008 us as 271 ns).

    Raises:
        ReportUnreadableError: naming the column and the unit.
    """
    unit = unit_cell.strip()
    if not known_unit(unit):
        raise ReportUnreadableError(f"{path}: {where}: unit {unit!r} of {metric} is not an ncu unit",
                                    "re-export the capture unedited; ncu writes units such as us, Mbyte, %, "
                                    "sector")
    _, normalized = normalize_unit(1.0, unit)
    if not unit_fits(metric, normalized):
        stated = f"is in {unit!r}" if unit else "has no unit (an empty cell)"
        raise ReportUnreadableError(f"{path}: {where}: {metric} {stated}, but it must be {expected_unit_text(metric)}",
                                    "re-export the capture unedited, or write the unit ncu writes")


def check_value(metric: str, value: float, cell: str, where: str, path: Path) -> None:
    """Refuse a value no reading can have (see :func:`~profiler_report.metrics.value_problem`).

    Raises:
        ReportUnreadableError: naming the line, the launch and the column.
    """
    why = value_problem(metric, value)
    if why:
        raise ReportUnreadableError(f"{path}: {where}: {metric} = {cell.strip()!r} {why}",
                                    "re-export the capture unedited; ncu writes 'n/a' for a value it could "
                                    "not measure")


def _launch_key(rec: list[str], col: dict[str, int]) -> tuple[int, str, str] | None:
    """(ncu ID, process, device) of a kernel row (its ID cell is a number); None for rows that are
    not one (units, repeated headers, program output). The readers then check its cell count."""
    id_cell = _cell(rec, col, "ID")
    if not id_cell:
        return None
    try:
        raw_id = int(parse_number(id_cell))
    except (ValueError, OverflowError):
        return None
    process = " ".join(filter(None, (_cell(rec, col, "Process ID"), _cell(rec, col, "Process Name"))))
    return raw_id, process, _cell(rec, col, "Device")


class _LaunchKeys:
    """Launch ids of a CSV: ncu's ID, unless the file repeats an ID for another process or device
    (exports joined together), in which case launches are numbered in file order."""

    def __init__(self) -> None:
        self.order: dict[tuple[int, str, str], int] = {}

    def add(self, key: tuple[int, str, str]) -> None:
        self.order.setdefault(key, len(self.order))

    def resolve(self, key: tuple[int, str, str]) -> int:
        """The launch id of ``key``, once every row has been added."""
        return key[0] if self.unique() else self.order[key]

    def unique(self) -> bool:
        ids = [k[0] for k in self.order]
        return len(set(ids)) == len(ids)

    def notes(self) -> list[str]:
        processes = sorted({k[1] for k in self.order if k[1]})
        devices = sorted({k[2] for k in self.order if k[2]})
        out = []
        if len(processes) > 1:
            out.append(f"This capture holds launches from {len(processes)} processes ({', '.join(processes)}).")
        if len(devices) > 1:
            out.append(f"This capture holds launches on {len(devices)} devices ({', '.join(devices)}).")
        if not self.unique():
            out.append("Launch IDs repeat across processes or devices: launches are numbered in file order.")
        return out


def _cell(rec: list[str], col: dict[str, int], name: str) -> str:
    i = col.get(name)
    return rec[i].strip() if i is not None and i < len(rec) else ""


_METRIC_NAME = re.compile(r"^[A-Za-z_][\w.:]*$")


_NVTX_FIELD = re.compile(r'"([^"]*)"')


def _csv_nvtx(rec: list[str], header: list[str]) -> str:
    """Range names from the ``thread Domain:Push/Pop_Range:...:Msg`` column.

    A cell reads ``<tid>  "<domain>:<range>:<payload type>:...:<msg>" ...``, one quoted field per
    range on the stack, outermost first.
    """
    for i, name in enumerate(header):
        if "Push/Pop_Range" in name and i < len(rec) and rec[i].strip():
            names = [f.split(":")[1] for f in _NVTX_FIELD.findall(rec[i]) if f.count(":") >= 1]
            return "/".join(n for n in names if n)
    return ""


def _csv_device(records: list[list[str]], h: int, col: dict[str, int]) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for rec in records[h + 1:]:
        gpu = _cell(rec, col, "device__attribute_display_name")
        if gpu:
            info["gpu"] = gpu
            break
    return info
