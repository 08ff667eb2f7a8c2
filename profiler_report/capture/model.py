"""The Capture model: one long base-unit table of (launch, metric) values, plus rule results and
per-instruction rows; and the checks every reader applies to a file before reading it."""

from __future__ import annotations

import math
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from profiler_report.errors import ReportUnreadableError
from profiler_report.metrics import value_problem
from profiler_report.util.frames import tuples

#: Columns of :attr:`Capture.metrics`, one row per (launch, metric).
METRIC_COLUMNS = [
    "launch_id",       # int: launch order in the capture (ncu's "ID")
    "kernel",          # str: function name without return type, template arguments or parameters
    "demangled",       # str: ncu's demangled kernel name (the C++ display name)
    "mangled",         # str: the mangled name (_Z...); "" when the export does not hold it
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
    "global_sectors",               # float: memory_l2_theoretical_sectors_global (L2 sectors this access needs)
    "global_ideal_sectors",         # float: memory_l2_theoretical_sectors_global_ideal
    "global_excessive_sectors",     # float: derived__memory_l2_theoretical_sectors_global_excessive (uncoalesced)
    "stall_samples",                # float: sum of smsp__pcsamp_warps_issue_stalled_<reason> (PC sampling)
    "top_stall",                    # str: the reason with the most samples at this instruction, "" if none
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
    #: A ladder of several capture files read as one (:func:`merge_captures`): launch_id -> the
    #: label of the file it came from; empty for one file.
    origins: dict[int, str] = field(default_factory=dict)
    #: The files of a merged ladder, in the order given; [] for one file (see ``path``).
    parts: list[Path] = field(default_factory=list)

    def launches(self) -> pd.DataFrame:
        """One row per launch: launch_id, kernel, demangled, mangled, nvtx_range, grid, block."""
        cols = ["launch_id", "kernel", "demangled", "mangled", "nvtx_range", "grid", "block"]
        return self.metrics[cols].drop_duplicates("launch_id").sort_values("launch_id").reset_index(drop=True)

    def value(self, launch_id: int, metric: str) -> float:
        """A metric's value for one launch; NaN when the capture does not hold it."""
        m = self.metrics
        hit = m[(m["launch_id"] == launch_id) & (m["metric"] == metric)]
        return float(hit["value"].iloc[0]) if len(hit) else math.nan

    def metric_names(self) -> set[str]:
        """Every metric name the capture holds on at least one launch."""
        return set(self.metrics["metric"])

    def wide(self) -> pd.DataFrame:
        """launch_id x metric table of values (base units)."""
        return self.metrics.pivot_table(index="launch_id", columns="metric", values="value", aggfunc="first")


def _check_file(path: Path) -> None:
    """Refuse what is not a readable capture file before opening it.

    Raises:
        ReportUnreadableError: missing (or a dangling link), a directory, not a regular file (a
            FIFO or a device: reading one could block, and it has no size to check), or empty.
    """
    if not path.exists():
        raise ReportUnreadableError(f"{path} does not exist", "check the path")
    if path.is_dir():
        raise ReportUnreadableError(f"{path} is a directory, not a report", "pass the .ncu-rep file inside it")
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device or socket"
        raise ReportUnreadableError(f"{path} is {kind}, not a regular file", "save the capture to a file first")
    if path.stat().st_size == 0:
        raise ReportUnreadableError(f"{path} is empty", "re-export the capture")


def check_values(metrics: pd.DataFrame, path: Path) -> None:
    """Refuse a capture holding a value no reading can have (:func:`~profiler_report.metrics.value_problem`):
    an infinite value, or a negative one of a metric the registry reads.

    Raises:
        ReportUnreadableError: naming the launch, the kernel and the metric.
    """
    values = metrics["value"].astype(float)
    odd = metrics[~values.map(math.isfinite) | (values < 0)]
    for r in tuples(odd):
        why = value_problem(str(r.metric), float(r.value))
        if why:
            raise ReportUnreadableError(f"{path}: launch {r.launch_id} ({r.kernel}): {r.metric} = {r.value!r} {why}",
                                        "re-record the capture; this ncu_report read a value ncu cannot measure")


def dedupe_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """Key metrics by their plain name: a collector-prefixed copy (``LTS.TriageCompute.<metric>``)
    is renamed to the plain name and kept only when the plain metric itself is absent."""
    plain = frame["metric"].map(plain_metric)
    prefixed = plain != frame["metric"]
    out = frame.assign(metric=plain, _prefixed=prefixed).sort_values(["launch_id", "_prefixed"], kind="stable")
    out = out.drop_duplicates(["launch_id", "metric"], keep="first").drop(columns="_prefixed")
    return out.sort_values(["launch_id", "metric"]).reset_index(drop=True)


def plain_metric(name: str) -> str:
    """``LTS.TriageCompute.lts__t_sectors.sum`` -> ``lts__t_sectors.sum``: drop collector prefixes."""
    parts = name.split(".")
    for i, p in enumerate(parts):
        if "__" in p:
            return ".".join(parts[i:])
    return name


def file_labels(paths: list[Path]) -> list[str]:
    """A stage label per capture file: its stem ('naive.ncu-rep' -> 'naive'); where stems repeat
    (every run writes profile.ncu-rep), the name of its folder instead."""
    stems = [Path(p).name.split(".")[0] for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [Path(p).parent.name or s if stems.count(s) > 1 else s for p, s in zip(paths, stems, strict=True)]


def merge_captures(captures: list[Capture]) -> Capture:
    """Several captures as one ladder, in the order given: launch ids renumbered so that the
    launches of each file follow those of the file before; ``origins`` says which file each came
    from; the device is the first file's (a note says so when another file's GPU differs)."""
    if len(captures) == 1:
        return captures[0]
    metrics, rules, source, files, origins = [], [], [], {}, {}
    notes: list[str] = []
    labels = file_labels([c.path for c in captures])
    offset = 0
    for cap, label in zip(captures, labels, strict=True):
        ids = sorted(cap.metrics["launch_id"].unique())
        remap = {old: offset + i for i, old in enumerate(ids)}
        metrics.append(cap.metrics.assign(launch_id=cap.metrics["launch_id"].map(remap)))
        if not cap.rules.empty:
            rules.append(cap.rules.assign(launch_id=cap.rules["launch_id"].map(remap)))
        if not cap.source.empty:
            source.append(cap.source.assign(launch_id=cap.source["launch_id"].map(remap)))
        files.update(cap.source_files)
        notes.extend(f"{cap.path.name}: {n}" for n in cap.notes)
        origins.update({new: label for new in remap.values()})
        offset += len(ids)
    first = captures[0]
    gpus = {str(c.device.get("gpu", "?")) for c in captures}
    if len(gpus) > 1:
        notes.append(f"The captures come from different GPUs ({', '.join(sorted(gpus))}): the device shown is "
                     f"{first.path.name}'s.")
    notes.insert(0, f"One ladder from {len(captures)} captures, in the order given: "
                 + ", ".join(f"{c.path} ({label})" for c, label in zip(captures, labels, strict=True)) + ".")
    return Capture(pd.concat(metrics, ignore_index=True),
                   pd.concat(rules, ignore_index=True) if rules else pd.DataFrame(columns=RULE_COLUMNS),
                   first.path, first.kind, first.device, first.report_version,
                   pd.concat(source, ignore_index=True) if source else pd.DataFrame(columns=SOURCE_COLUMNS),
                   files, notes, origins, [c.path for c in captures])
