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
import glob
import importlib
import io
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ReportUnreadableError

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

#: Columns of :attr:`Capture.rules`: Nsight Compute guided-analysis rule results.
RULE_COLUMNS = ["launch_id", "rule", "section", "type", "title", "message", "speedup_pct", "speedup_type"]

_PREFIX = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BASES = ("byte", "cycle", "hz", "inst", "warp", "sector", "request", "wavefront",
          "thread", "block", "register", "transaction", "bit")
_UNIT_PART = re.compile(rf"^(?P<p>[pnumKMGT]?)(?P<b>{'|'.join(_BASES)})$")
#: Time units in nanoseconds, the one internal time unit.
_TIME_NS = {"ps": 1e-3, "psecond": 1e-3, "ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3,
            "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}


def _part(part: str) -> tuple[float, str] | None:
    """(scale to base, base) of one side of a unit; None when not understood."""
    if part in _TIME_NS:
        return _TIME_NS[part], "ns"
    m = _UNIT_PART.match(part)
    if m:
        return _PREFIX[m.group("p")], m.group("b")
    return None


def normalize_unit(value: float, unit: str) -> tuple[float, str]:
    """Convert ``value`` in an ncu unit to base units; return (value, unit).

    Times become ``ns`` (``usecond``, ``us`` -> ``ns``); per-time rates become ``/s``
    (``Gbyte/s``, ``sector/ns`` -> ``byte/s``, ``sector/s``); SI prefixes go (``Mbyte`` ->
    ``byte``, ``%/Kbyte`` -> ``%/byte``). Units not understood (``%``, ``register/thread``) pass
    through unchanged; so do their values.
    """
    unit = (unit or "").strip()
    if not unit:
        return value, ""
    num, _, den = unit.partition("/")
    scale = 1.0
    p = _part(num)
    if p:
        scale, num = p
    if den:
        q = _part(den)
        if q and q[1] == "ns":  # a rate: express it per second
            scale *= 1e9 / q[0]
            den = "s"
        elif q:
            scale /= q[0]
            den = q[1]
        return value * scale, f"{num}/{den}"
    return value * scale, num


_SHORT = re.compile(r"^(?:void\s+)?([A-Za-z_][\w:]*)")


def short_kernel_name(name: str) -> str:
    """``void ns::transpose_naive<float>(const float *, ...)`` -> ``ns::transpose_naive``."""
    m = _SHORT.match(name.strip())
    return m.group(1) if m else name.strip()


@dataclass
class Capture:
    """One capture, read into tables. See METRIC_COLUMNS and RULE_COLUMNS for the frames."""

    metrics: pd.DataFrame
    rules: pd.DataFrame
    path: Path
    kind: str  # "ncu-rep" or "csv"
    device: dict[str, Any] = field(default_factory=dict)
    report_version: str = ""

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


def import_ncu_report() -> Any:
    """The ``ncu_report`` module: the PyPI package, else the copy bundled with an ncu install.

    Raises:
        ReportUnreadableError: neither can be imported.
    """
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for extras in sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True) + sorted(
        glob.glob("/usr/local/cuda*/nsight-compute*/extras/python"), reverse=True
    ):
        sys.path.insert(0, extras)
        try:
            return importlib.import_module("ncu_report")
        except ImportError:
            sys.path.remove(extras)
    raise ReportUnreadableError("the ncu_report module is not installed", "pip install ncu-report")


def _check_file(path: Path) -> None:
    if not path.exists():
        raise ReportUnreadableError(f"{path} does not exist", "check the path")
    if path.is_dir():
        raise ReportUnreadableError(f"{path} is a directory, not a report", "pass the .ncu-rep file inside it")
    if path.stat().st_size == 0:
        raise ReportUnreadableError(f"{path} is empty", "re-export the capture")


def _nvtx_ranges(action: Any) -> str:
    try:
        state = action.nvtx_state()
        if state is None:
            return ""
        names: list[str] = []
        for dom_id in state.domains():
            names.extend(state.domain_by_id(dom_id).push_pop_ranges())
        return "/".join(names)
    except Exception:  # ncu_report raises plain RuntimeError subclasses here
        return ""


def _metric_value(m: Any) -> float | None:
    kind = m.kind()
    if kind == m.ValueKind_STRING or not m.has_value():
        return None
    if kind in (m.ValueKind_UINT32, m.ValueKind_UINT64):
        return float(m.as_uint64())
    return float(m.as_double())


def _device(action: Any) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for key, metric in (
        ("gpu", "device__attribute_display_name"),
        ("sm_count", "device__attribute_multiprocessor_count"),
        ("cc_major", "device__attribute_compute_capability_major"),
        ("cc_minor", "device__attribute_compute_capability_minor"),
        ("sm_clock_khz", "device__attribute_clock_rate"),
        ("memory_clock_khz", "device__attribute_memory_clock_rate"),
        ("l2_bytes", "device__attribute_l2_cache_size"),
        ("chip", "device__attribute_chip"),
    ):
        m = action.metric_by_name(metric)
        if m is None:
            continue
        info[key] = m.as_string() if m.kind() == m.ValueKind_STRING else m.value()
    return info


def _rules(action: Any, launch_id: int) -> list[dict[str, Any]]:
    rows = []
    for r in action.rule_results():
        msg = r.rule_message() if r.has_rule_message() else None  # dict: title, message, type
        speed = r.speedup_estimation() if r.has_speedup_estimation() else None  # dict: type, speedup
        if not msg:
            continue
        rows.append({
            "launch_id": launch_id,
            "rule": r.rule_identifier(),
            "section": r.section_identifier(),
            "type": _msg_type(msg.get("type", 0)),
            "title": msg.get("title") or r.name(),
            "message": clean_rule_text(msg.get("message", "")),
            "speedup_pct": float(speed["speedup"]) if speed else math.nan,
            "speedup_type": _speedup_type(speed["type"]) if speed else "",
        })
    return rows


_LINK = re.compile(r"@(?:section|url):([^:@]+):?([^@]*)@")


def clean_rule_text(text: str) -> str:
    """Drop ncu's link markup: ``@section:Id:Name@`` -> ``Name``, ``@url:Name:https://..@`` -> ``Name``."""
    return _LINK.sub(lambda m: m.group(2).split(":http")[0] if m.group(2) else m.group(1), text)


def _msg_type(t: int) -> str:
    return {0: "none", 1: "ok", 2: "warning", 3: "error", 4: "optimization"}.get(int(t), str(t))


def _speedup_type(t: int) -> str:
    return {0: "unknown", 1: "local", 2: "global"}.get(int(t), str(t))


def read_ncu_rep(path: str | Path) -> Capture:
    """Read every launch of a ``.ncu-rep`` into a :class:`Capture`.

    Metrics with a numeric value become rows (instanced values are left out: the aggregate is
    kept). Guided-analysis rule results go to ``rules``.

    Raises:
        ReportUnreadableError: missing, empty, a directory, not a report, or from an ncu version
            this ``ncu_report`` cannot read.
    """
    path = Path(path)
    _check_file(path)
    ncu_report = import_ncu_report()
    try:
        ctx = ncu_report.load_report(str(path))
    except Exception as exc:  # the SWIG layer raises bare RuntimeError/ValueError
        raise ReportUnreadableError(
            f"{path} is not a readable Nsight Compute report ({str(exc).strip()[:200] or type(exc).__name__})",
            "pass a complete .ncu-rep; a report from a much newer ncu needs a newer `pip install -U ncu-report`",
        ) from exc
    rows: list[dict[str, Any]] = []
    rules: list[dict[str, Any]] = []
    device: dict[str, Any] = {}
    launch_id = 0
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            action = rng.action_by_idx(ai)
            rows.extend(_action_rows(action, launch_id))
            rules.extend(_rules(action, launch_id))
            if not device:
                device = _device(action)
            launch_id += 1
    if not rows:
        raise ReportUnreadableError(f"{path} holds no profiled kernel launch", "re-profile; check ncu's filters")
    metrics = dedupe_metrics(pd.DataFrame(rows, columns=METRIC_COLUMNS))
    version = ""
    try:
        version = str(ctx.get_version())
    except Exception:
        pass
    return Capture(metrics, pd.DataFrame(rules, columns=RULE_COLUMNS), path, "ncu-rep", device, version)


def _action_rows(action: Any, launch_id: int) -> list[dict[str, Any]]:
    demangled = action.name(action.NameBase_DEMANGLED)
    base = {
        "launch_id": launch_id,
        "kernel": short_kernel_name(demangled),
        "demangled": demangled,
        "nvtx_range": _nvtx_ranges(action),
        "grid": _dim(action, "launch__grid_dim"),
        "block": _dim(action, "launch__block_dim"),
    }
    rows = []
    for name in action.metric_names():
        m = action.metric_by_name(name)
        v = _metric_value(m)
        if v is None:
            continue
        value, unit = normalize_unit(v, m.unit())
        rows.append({**base, "metric": name, "value": value, "unit": unit})
    return rows


def dedupe_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """Key metrics by their plain name: a collector-prefixed copy (``LTS.TriageCompute.<metric>``)
    is renamed to the plain name and kept only when the plain metric itself is absent."""
    plain = frame["metric"].map(plain_metric)
    prefixed = plain != frame["metric"]
    out = frame.assign(metric=plain, _prefixed=prefixed).sort_values(["launch_id", "_prefixed"], kind="stable")
    out = out.drop_duplicates(["launch_id", "metric"], keep="first").drop(columns="_prefixed")
    return out.sort_values(["launch_id", "metric"]).reset_index(drop=True)


def _dim(action: Any, prefix: str) -> str:
    vals = []
    for axis in "xyz":
        m = action.metric_by_name(f"{prefix}_{axis}")
        vals.append(str(int(m.as_uint64())) if m is not None and m.has_value() else "?")
    return f"({', '.join(vals)})"


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
    """Parse the text of a raw-page CSV export; see :func:`read_csv`."""
    try:
        records = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise ReportUnreadableError(f"{path} is not valid CSV ({exc})") from exc
    h = _find_header(records)
    if h < 0:
        raise ReportUnreadableError(f"{path} has no ncu raw-page header (no 'ID' and 'Kernel Name' columns)",
                                    "export with `ncu --import R.ncu-rep --csv --page raw > R.csv`")
    header = records[h]
    body = records[h + 1:]
    units: list[str] = [""] * len(header)
    if body and _is_units_row(body[0], header):
        units = (body[0] + [""] * len(header))[: len(header)]
        body = body[1:]
    col = {name: i for i, name in reversed(list(enumerate(header)))}  # first occurrence wins
    rows: list[dict[str, Any]] = []
    for rec in body:
        if len(rec) < len(header) // 2 or not rec[col["ID"]].strip():
            continue
        try:
            launch_id = int(parse_number(rec[col["ID"]]))
        except (ValueError, OverflowError):
            continue
        rows.extend(_csv_row(rec, header, units, col, launch_id))
    if not rows:
        raise ReportUnreadableError(f"{path}: no kernel row could be parsed", "check the export is a raw page")
    metrics = dedupe_metrics(pd.DataFrame(rows, columns=METRIC_COLUMNS))
    return Capture(metrics, pd.DataFrame(columns=RULE_COLUMNS), path, "csv", _csv_device(records, h, col))


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
        if name in CSV_ID_COLUMNS or i >= len(rec) or "Domain:" in name or not name.strip():
            continue
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


def read_capture(path: str | Path) -> Capture:
    """Read a ``.ncu-rep`` or a raw-page ``.csv`` export, chosen by the file's suffix/content."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return read_csv(path)
    _check_file(path)
    with path.open("rb") as fh:
        head = fh.read(64)
    if head.lstrip().startswith((b'"ID"', b"ID,", b'"==PROF==')):
        return read_csv(path)
    return read_ncu_rep(path)
