"""CSV common."""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any

from profiler_report.errors import ReportUnreadableError

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
    for i, rec in enumerate(records[:50]):
        if "ID" in rec and "Kernel Name" in rec:
            return i
    return -1


def _csv_records(text: str, path: Path) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise ReportUnreadableError(f"{path} is not valid CSV ({exc})") from exc


def _launch_key(rec: list[str], col: dict[str, int], width: int) -> tuple[int, str, str] | None:
    """(ncu ID, process, device) of a kernel row; None for rows that are not one (units, repeats)."""
    id_cell = _cell(rec, col, "ID")
    if len(rec) < width // 2 or not id_cell:
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
