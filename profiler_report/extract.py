"""Extract stage: read an Nsight Compute capture into tidy pandas tables.

Two readers produce the same :class:`Capture`:

* :func:`read_ncu_rep` reads a ``.ncu-rep`` with NVIDIA's ``ncu_report`` module (PyPI
  ``ncu-report``; falls back to the copy bundled with ncu under ``extras/python``). No GPU needed.
* :func:`read_csv` reads ``ncu --import R --csv --page raw`` exports, which is all many users have.

Both convert values to base units (byte, nsecond, cycle, byte/second, ...) so the two paths give
the same numbers for the same capture.
"""

from __future__ import annotations

import csv
import importlib
import importlib.metadata
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ReportUnreadableError
from .ncu_reader import (  # noqa: F401  (re-exported: both readers and the tests use them)
    SOURCE_LAUNCHES,
    clean_rule_text,
    normalize_unit,
    shared_side,
    short_kernel_name,
    source_rows,
)
from .readahead import READ_TIMEOUT_S, PendingRead, ncu_rep_format

#: Columns of :attr:`Capture.metrics`, one row per (launch, metric).
METRIC_COLUMNS = [
    "launch_id",       # int: launch order in the capture (ncu's "ID")
    "kernel",          # str: function name without return type, template arguments or parameters
    "demangled",       # str: ncu's demangled kernel name
    "nvtx_range",      # str: NVTX push/pop ranges around the launch, outermost first, "/"-joined
    "grid",            # str: "(x, y, z)" blocks
    "block",           # str: "(x, y, z)" threads
    "metric",          # str: Nsight Compute metric name
    "value",           # float: value in `unit`
    "unit",            # str: base unit after conversion ("byte", "nsecond", "" for counts, ...)
]

#: Columns of :attr:`Capture.source`: one row per (launch, SASS instruction) that executed.
SOURCE_COLUMNS = [
    "launch_id",        # int
    "pc_offset",        # int: byte offset of the instruction from the launch's first sampled PC
    "sass",             # str: the SASS instruction (ncu_report sass_by_pc)
    "side",             # str: "load" (LDS*), "store" (STS*), "other shared" (ATOMS...) or "" (not shared)
    "file",             # str: CUDA source file from line information, "" when built without -lineinfo
    "line",             # int: source line, 0 when there is no line information
    "inst_executed",    # float: warp-level instructions executed (ncu metric inst_executed)
    "shared_wavefronts",            # float: memory_l1_wavefronts_shared at this instruction
    "shared_ideal_wavefronts",      # float: memory_l1_wavefronts_shared_ideal
    "shared_excessive_wavefronts",  # float: derived__memory_l1_wavefronts_shared_excessive
]

#: Columns of :attr:`Capture.rules`: Nsight Compute guided-analysis rule results.
RULE_COLUMNS = ["launch_id", "rule", "section", "type", "title", "message", "speedup_pct", "speedup_type"]

@dataclass
class Capture:
    """One capture, read into tables. See METRIC_COLUMNS and RULE_COLUMNS for the frames."""

    metrics: pd.DataFrame
    rules: pd.DataFrame
    path: Path
    kind: str  # "ncu-rep", "csv" (raw page) or "csv-details" (details page)
    device: dict[str, Any] = field(default_factory=dict)
    report_version: str = ""  # version of the ncu_report library that read it ("" for CSV)
    #: Per-instruction attribution (SOURCE_COLUMNS), .ncu-rep only; empty for CSV exports.
    source: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SOURCE_COLUMNS))
    #: Source files the capture names, path -> text ("" when ncu could not import the file).
    source_files: dict[str, str] = field(default_factory=dict)
    #: Facts worth a note in the report (several processes or devices in one file, ...).
    notes: list[str] = field(default_factory=list)

    def launches(self) -> pd.DataFrame:
        """One row per launch: launch_id, kernel, demangled, nvtx_range, grid, block."""
        cols = ["launch_id", "kernel", "demangled", "nvtx_range", "grid", "block"]
        return self.metrics[cols].drop_duplicates("launch_id").sort_values("launch_id").reset_index(drop=True)

    def value(self, launch_id: int, metric: str) -> float:
        """A metric's value for one launch; NaN when the capture does not hold it."""
        m = self.metrics
        hit = m[(m["launch_id"] == launch_id) & (m["metric"] == metric)]
        return float(hit["value"].iloc[0]) if len(hit) else math.nan

    def wide(self) -> pd.DataFrame:
        """launch_id x metric table of values (base units)."""
        return self.metrics.pivot_table(index="launch_id", columns="metric", values="value", aggfunc="first")


# ---------------------------------------------------------------------------------------------
# .ncu-rep through ncu_report


def _check_file(path: Path) -> None:
    if not path.exists():
        raise ReportUnreadableError(f"{path} does not exist", "check the path")
    if path.is_dir():
        raise ReportUnreadableError(f"{path} is a directory, not a report", "pass the .ncu-rep file inside it")
    if path.stat().st_size == 0:
        raise ReportUnreadableError(f"{path} is empty", "re-export the capture")


#: Report format version written by the ncu releases this tool is tested with (2025.x).
NCU_REP_FORMAT = 2


def read_ncu_rep(path: str | Path, timeout_s: float = READ_TIMEOUT_S, pending: PendingRead | None = None) -> Capture:
    """Read every launch of a ``.ncu-rep`` into a :class:`Capture`.

    Metrics with a numeric value become rows (instanced values are left out: the aggregate is
    kept). Guided-analysis rule results go to ``rules``; per-instruction values (``inst_executed``
    and the shared-memory wavefront metrics, by PC) go to ``source``. ncu_report runs in child
    processes (see :mod:`profiler_report.ncu_reader` for why); ``pending`` is a read of ``path``
    started earlier with :func:`profiler_report.readahead.start_read`, else one starts here and
    may take ``timeout_s`` seconds.

    Raises:
        ReportUnreadableError: missing, empty, a directory, not a report (no ``NVR`` header),
            truncated or corrupt, from an ncu version this ``ncu_report`` cannot read, or
            ncu_report is not installed or crashed on it.
        ValueError: ``pending`` reads another file.
    """
    path = Path(path)
    if pending is not None and pending.path != path:
        raise ValueError(f"the pending read is of {pending.path}, not {path}")
    _check_file(path)
    fmt = ncu_rep_format(path)
    if fmt is None:
        raise ReportUnreadableError(f"{path} is not an Nsight Compute report (no NVR header)")
    data = (pending or PendingRead(path, timeout_s)).raw()
    if data.get("error") == "no-module":
        raise ReportUnreadableError("the ncu_report module is not installed", "pip install ncu-report")
    if data.get("error"):
        raise ReportUnreadableError(
            f"{path} is not a readable Nsight Compute report ({data['error']})",
            "pass a complete .ncu-rep; a report from a much newer ncu needs a newer `pip install -U ncu-report`",
        )
    if not data["rows"]:
        raise _no_launch_error(path, fmt, data.get("module_version", ""))
    n = data["launches"]
    notes = [f"Per-instruction attribution was read for the first {SOURCE_LAUNCHES} of {n} launches only."] \
        if n > SOURCE_LAUNCHES else []
    return Capture(dedupe_metrics(pd.DataFrame(data["rows"], columns=METRIC_COLUMNS)),
                   pd.DataFrame(data["rules"], columns=RULE_COLUMNS), path, "ncu-rep", data["device"],
                   data["version"], pd.DataFrame(data["source"], columns=SOURCE_COLUMNS), data["files"], notes)


def _no_launch_error(path: Path, fmt: int, module_version: str) -> ReportUnreadableError:
    """Why a report with an NVR header yields no launch: another format version, else truncation."""
    try:
        lib = importlib.metadata.version("ncu-report")
    except importlib.metadata.PackageNotFoundError:  # the copy bundled with an ncu install
        lib = module_version or "(bundled)"
    if fmt != NCU_REP_FORMAT:
        return ReportUnreadableError(
            f"{path} uses report format version {fmt}, which ncu_report {lib} read no kernel launch from "
            f"(ncu 2025.x writes format {NCU_REP_FORMAT}): it was written by a much newer or older ncu",
            "open it with the ncu that wrote it and export a raw CSV (`ncu --import R --csv --page raw`), "
            "or install the matching `pip install ncu-report==<that ncu version>`",
        )
    return ReportUnreadableError(
        f"{path} holds no readable kernel launch: the file is truncated or corrupt, or ncu profiled nothing",
        "re-copy or re-export the capture; check ncu's filters matched a kernel",
    )


def dedupe_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """Key metrics by their plain name: a collector-prefixed copy (``LTS.TriageCompute.<metric>``)
    is renamed to the plain name and kept only when the plain metric itself is absent."""
    plain = frame["metric"].map(plain_metric)
    prefixed = plain != frame["metric"]
    out = frame.assign(metric=plain, _prefixed=prefixed).sort_values(["launch_id", "_prefixed"], kind="stable")
    out = out.drop_duplicates(["launch_id", "metric"], keep="first").drop(columns="_prefixed")
    return out.sort_values(["launch_id", "metric"]).reset_index(drop=True)



# ---------------------------------------------------------------------------------------------
# CSV exports (ncu --import R --csv --page raw)

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


def _find_header(records: list[list[str]]) -> int:
    for i, rec in enumerate(records[:50]):
        if "ID" in rec and "Kernel Name" in rec:
            return i
    return -1


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


def _is_units_row(rec: list[str], header: list[str]) -> bool:
    try:
        return not rec[header.index("ID")].strip() and not rec[header.index("Kernel Name")].strip()
    except (ValueError, IndexError):
        return False


def _cell(rec: list[str], col: dict[str, int], name: str) -> str:
    i = col.get(name)
    return rec[i].strip() if i is not None and i < len(rec) else ""


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


def plain_metric(name: str) -> str:
    """``LTS.TriageCompute.lts__t_sectors.sum`` -> ``lts__t_sectors.sum``: drop collector prefixes."""
    parts = name.split(".")
    for i, p in enumerate(parts):
        if "__" in p:
            return ".".join(parts[i:])
    return name


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


def read_capture(path: str | Path, pending: PendingRead | None = None) -> Capture:
    """Read a ``.ncu-rep``, or a raw-page or details-page CSV export, chosen by the file's content.

    ``pending``: a read of the ``.ncu-rep`` at ``path`` already started (see :func:`read_ncu_rep`).

    Raises:
        ReportUnreadableError: see :func:`read_ncu_rep` and :func:`read_csv`.
    """
    path = Path(path)
    _check_file(path)
    if ncu_rep_format(path) is not None:
        return read_ncu_rep(path, pending=pending)
    with path.open("rb") as fh:
        head = fh.read(4096)
    if path.suffix.lower() == ".csv" or _looks_like_csv(head):
        return read_csv(path)
    return read_ncu_rep(path)  # raises "not an Nsight Compute report"


def _looks_like_csv(head: bytes) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text.startswith((b'"ID"', b"ID,", b'"==PROF==', b"==PROF==")) or b'"Kernel Name"' in text


# ---------------------------------------------------------------------------------------------
# Details-page CSV exports (ncu --import R --csv --page details)

#: Columns of :func:`details_table`: one row per (launch, section, metric) of the details page.
DETAILS_COLUMNS = ["launch_id", "section", "name", "value", "unit"]

#: Details-page entries that are an ncu metric under another name, keyed by (section, name);
#: checked value by value against the .ncu-rep of tests/data/h200_f32_4096. The details page
#: rounds to three or four significant digits, so these values are coarser than the raw page's.
DETAILS_TO_METRIC = {
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    ("GPU Speed Of Light Throughput", "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "Memory Throughput"):
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "Compute (SM) Throughput"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
    ("Occupancy", "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    ("Occupancy", "Theoretical Occupancy"): "sm__maximum_warps_per_active_cycle_pct",
    ("Launch Statistics", "Registers Per Thread"): "launch__registers_per_thread",
    ("Launch Statistics", "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    ("Launch Statistics", "Dynamic Shared Memory Per Block"): "launch__shared_mem_per_block_dynamic",
}
_RULE_TYPES = {"OPT": "optimization", "WRN": "warning", "ERR": "error", "INF": "none", "OK": "ok"}


def is_details_header(header: list[str]) -> bool:
    """True for the details page: it has Section Name, Metric Name and Metric Value columns."""
    return {"Section Name", "Metric Name", "Metric Value"} <= set(header)


def details_key(section: str, name: str) -> str:
    """Metric name of a details-page entry: its ncu metric when known, else ``section: name``,
    so that 'Memory Throughput' of two sections stays two entries."""
    return DETAILS_TO_METRIC.get((section, name), f"{section}: {name}")


def parse_details_records(records: list[list[str]], h: int, path: Path) -> Capture:
    """A :class:`Capture` from the records of a details-page export whose header is ``records[h]``.

    Each (launch, section, metric) row becomes one metric (see :func:`details_key`), converted to
    base units with its own ``Metric Unit`` (units rescale per kernel: Mbyte for one launch,
    Gbyte for another). Rule rows (``Rule Name`` set) become ``rules``. Text values are skipped;
    'n/a' and friends stay missing.

    Raises:
        ReportUnreadableError: no row parses.
    """
    header = records[h]
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    keys = _LaunchKeys()
    pending = []
    for rec in records[h + 1:]:
        key = _launch_key(rec, col, len(header))
        if key is not None:
            keys.add(key)
            pending.append((key, rec))
    rows: list[dict[str, Any]] = []
    rules: list[dict[str, Any]] = []
    for key, rec in pending:
        launch_id = keys.resolve(key)
        if _cell(rec, col, "Rule Name"):
            rules.append(_details_rule(rec, col, launch_id))
            continue
        row = _details_metric(rec, col, launch_id)
        if row is not None:
            rows.append(row)
    if not rows:
        raise ReportUnreadableError(f"{path}: no metric row of the details page could be parsed",
                                    "check the file is an unedited `ncu --csv --page details` export")
    metrics = pd.DataFrame(rows, columns=METRIC_COLUMNS).drop_duplicates(["launch_id", "metric"])
    metrics = metrics.sort_values(["launch_id", "metric"]).reset_index(drop=True)
    return Capture(metrics, pd.DataFrame(rules, columns=RULE_COLUMNS), path, "csv-details",
                   _csv_device(records, h, col), notes=keys.notes())


def _launch_base(rec: list[str], col: dict[str, int], launch_id: int) -> dict[str, Any]:
    demangled = _cell(rec, col, "Kernel Name")
    header = [""] * (max(col.values()) + 1)
    for name, i in col.items():
        header[i] = name
    return {"launch_id": launch_id, "kernel": short_kernel_name(demangled), "demangled": demangled,
            "nvtx_range": _csv_nvtx(rec, header), "grid": _cell(rec, col, "Grid Size"),
            "block": _cell(rec, col, "Block Size")}


def _details_metric(rec: list[str], col: dict[str, int], launch_id: int) -> dict[str, Any] | None:
    section, name = _cell(rec, col, "Section Name"), _cell(rec, col, "Metric Name")
    if not name:
        return None
    try:
        raw = parse_number(_cell(rec, col, "Metric Value"))
    except ValueError:
        return None  # a text value ("PolicySpread", "all")
    if math.isnan(raw):
        return None
    value, unit = normalize_unit(raw, _cell(rec, col, "Metric Unit"))
    return {**_launch_base(rec, col, launch_id), "metric": details_key(section, name), "value": value, "unit": unit}


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
        records = _csv_records(path.read_text(encoding="utf-8"), path)
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
        key = _launch_key(rec, col, len(header))
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


# ---------------------------------------------------------------------------------------------
# Per-instruction attribution (.ncu-rep only)

