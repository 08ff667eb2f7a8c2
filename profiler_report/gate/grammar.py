"""The thresholds file: TOML in, :class:`Thresholds` (a list of :class:`~.rules.Rule`) out.

First step of the gate (then :mod:`.evaluate`, then :mod:`.output`); it reads no capture. Every
mistake is a :class:`~profiler_report.errors.ThresholdsError` (exit 2) naming the file, the
section and the rule, with the closest valid name where there is one.

Format (``version = 1``; README, "Regression gate")::

    version = 1                       # optional; 1 is the only version
    description = "..."               # optional, ignored

    [stage.ID]                        # a stage label of `profiler-report summary`
    optional = true                   # optional: a capture without the stage skips its rules
    description = "..."               # optional, ignored
    rules = [
      "METRIC OP LIMIT",              # e.g. "shared_excessive_wavefronts == 0"
      { rule = "event_gbps >= 3000", unit = "GB/s", optional = false },
    ]

    [kernel."REGEX"]                  # every stage whose kernel name matches REGEX (re.search)
    rules = ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum <= previous"]

- METRIC: a headline or event-timing column (:func:`metric_names`; ``duration`` is
  ``event_median_us``; ``duration_us`` is ncu's gpu__time_duration.sum of the single profiled
  launch, in every capture) or a raw ncu metric name (``unit__counter.suffix``). nvprof names and
  the noisy or single-launch names in :data:`REFUSED` are refused with their replacement.
- OP: ``==``, ``<=``, ``>=``, ``<``, ``>``; ``==`` is refused on time.
- LIMIT: a finite number with an optional unit of the metric's kind (``25 %``, ``40 us``,
  ``3 TB/s``), or ``previous`` / ``baseline`` with an optional positive factor
  (``1.10 * baseline``, ``previous * 0.5``).
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiler_report.errors import ThresholdsError
from profiler_report.gate.rules import ALIASES, TIMING_BY_NAME, Rule, canon_unit, convert_unit
from profiler_report.metrics import HEADLINE, HEADLINE_BY_NAME, NCU_DURATION, SINGLE_LAUNCH_COLUMNS, TIMING_COLUMNS
from profiler_report.model.registry import DEFAULT_CASE
from profiler_report.util.resources import resource_dir

#: nvprof metric -> (ncu-based replacement, its source).
NVPROF_NAMES = {
    "gld_efficiency": ("global_load_efficiency_pct",
                       "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio / 32 * 100"),
    "gst_efficiency": ("global_store_efficiency_pct",
                       "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio / 32 * 100"),
    "shared_ld_bank_conflict": ("shared_excessive_wavefronts", "derived__memory_l1_wavefronts_shared_excessive"),
    "shared_st_bank_conflict": ("shared_excessive_wavefronts", "derived__memory_l1_wavefronts_shared_excessive"),
    "shared_load_transactions_per_request": ("shared_wavefronts_per_load",
                                             "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / "
                                             "smsp__sass_inst_executed_op_shared_ld.sum"),
    "shared_store_transactions_per_request": ("shared_wavefronts_per_store",
                                              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum / "
                                              "smsp__sass_inst_executed_op_shared_st.sum"),
    "gld_transactions_per_request": ("global_load_sectors_per_request",
                                     "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
                                     "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    "gst_transactions_per_request": ("global_store_sectors_per_request",
                                     "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum / "
                                     "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    "achieved_occupancy": ("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    "dram_read_throughput": ("event_gbps", "event-timed GB/s (timings.json)"),
    "dram_write_throughput": ("event_gbps", "event-timed GB/s (timings.json)"),
}


_CONFLICT_MSG = ("is a raw hardware counter: not zero on conflict-free code and different from run to run",
                 "gate bank conflicts on shared_excessive_wavefronts (derived__memory_l1_wavefronts_shared_excessive) "
                 "or shared_wavefronts_per_load / shared_wavefronts_per_store")


_SINGLE_TIME_MSG = ("comes from a single profiled launch (gpu__time_duration under ncu)",
                    "gate time on event timings: `duration` (event-timed median, timings.json) or event_gbps, "
                    "e.g. 'duration <= 1.10 * baseline'; or on ncu's own time of the launch: duration_us "
                    "(gpu__time_duration.sum, in every capture)")


#: (pattern, (why, what to gate instead)) for names a rule may not use.
REFUSED = (
    (re.compile(r"^bank_conflicts_(ld|st)_raw$"), _CONFLICT_MSG),
    (re.compile(r"^l1tex__data_bank_conflicts_pipe_lsu"), _CONFLICT_MSG),
    (re.compile("^(" + "|".join(c for c in SINGLE_LAUNCH_COLUMNS if c != NCU_DURATION) + ")$"), _SINGLE_TIME_MSG),
    (re.compile(r"^gpu__time_duration"), _SINGLE_TIME_MSG),
)


_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


_RULE = re.compile(r"\s*(?P<metric>[A-Za-z_][\w.]*)\s*(?P<op>==|<=|>=|<|>)\s*(?P<rhs>.*?)\s*", re.S)


_REF = re.compile(rf"(?:(?P<f1>{_NUM})\s*\*\s*)?(?P<ref>baseline|previous)(?:\s*\*\s*(?P<f2>{_NUM}))?")


#: A unit is letters (any script: ``µs``), ``%`` and ``/``.
_ABS = re.compile(rf"(?P<value>{_NUM})\s*(?P<unit>(?:[^\W\d_]|[%/])+)?")


_RAW_NCU = re.compile(r"^[a-z0-9]+__\w+(\.\w+)*$")


@dataclass
class Thresholds:
    """A parsed thresholds file: its rules, in file order."""

    rules: list[Rule]
    path: str = "<thresholds>"


def closest_hint(name: str, pool: list[str]) -> str:
    """'did you mean a, b?' naming the (up to three) entries of ``pool`` closest to ``name``; ''
    when none is close. The hint of every unknown-name error, here and in :mod:`.evaluate`."""
    near = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
    return f"did you mean {', '.join(near)}?" if near else ""


def metric_names() -> list[str]:
    """Every name a rule may use besides raw ncu metrics: headline and timing columns, aliases."""
    return [c.name for c in (*HEADLINE, *TIMING_COLUMNS) if not any(p.search(c.name) for p, _ in REFUSED)] \
        + list(ALIASES)


def resolve_metric(name: str, where: str) -> tuple[str, str]:
    """(canonical metric name, kind) for a name written in a rule.

    Kinds: "headline", "timing", "raw" (anything shaped like an ncu metric: ``unit__counter...``).

    Raises:
        ThresholdsError: an nvprof name (names its ncu replacement), a refused name (raw
            bank-conflict counters, single-launch durations), or an unknown name (closest names).
    """
    for pattern, (why, instead) in REFUSED:
        if pattern.search(name):
            raise ThresholdsError(f"{where}: {name} {why}", instead)
    if name in NVPROF_NAMES:
        new, source = NVPROF_NAMES[name]
        raise ThresholdsError(f"{where}: {name} is an nvprof metric; Nsight Compute has no such name",
                              f"use {new} ({source})")
    name = ALIASES.get(name, name)
    if name in HEADLINE_BY_NAME:
        return name, "headline"
    if name in TIMING_BY_NAME:
        return name, "timing"
    if _RAW_NCU.match(name):
        return name, "raw"
    hint = closest_hint(name, metric_names())
    raise ThresholdsError(f"{where}: unknown metric {name!r}",
                          hint or "use a headline metric (profiler-report summary shows them) or an ncu metric name")


def metric_unit(metric: str, kind: str) -> str | None:
    """The unit a headline or timing metric is in; None for raw metrics (known from the capture)."""
    if kind == "headline":
        return HEADLINE_BY_NAME[metric].unit
    if kind == "timing":
        return TIMING_BY_NAME[metric].unit
    return None


def parse_rule(text: str, where: str, *, unit: str = "", stage: str | None = None, kernel: str | None = None,
               optional: bool = False) -> Rule:
    """One rule from its text (and an optional ``unit`` stated beside it).

    Raises:
        ThresholdsError: the text does not parse, the metric is unknown or refused, a number is
            not finite, the unit does not match the metric, or ``==`` is used on time.
    """
    shown = " ".join(text.split())
    m = _RULE.fullmatch(text)
    if not m:
        hint = "'=' is written '=='" if re.search(r"[^=<>!]=[^=]", text) else "e.g. 'shared_excessive_wavefronts == 0'"
        raise ThresholdsError(f"{where}: cannot parse rule {shown!r}: expected 'METRIC OP LIMIT' with OP one of "
                              "== <= >= < >", hint)
    metric, kind = resolve_metric(m.group("metric"), where)
    rule = _rhs(m.group("rhs"), where, shown, metric, kind, m.group("op"))
    if unit and rule.stated_unit and canon_unit(unit) != canon_unit(rule.stated_unit):
        raise ThresholdsError(f"{where}: rule {shown!r} states unit {rule.stated_unit!r} but unit = {unit!r}")
    if unit and not rule.stated_unit and rule.value is not None:
        shown = f"{shown} {unit}"
    rule = Rule(shown, metric, kind, rule.op, rule.value, rule.ref, rule.factor, rule.stated_unit or unit,
                stage, kernel, optional, where)
    if (kind == "timing" or metric == NCU_DURATION) and rule.op == "==":
        raise ThresholdsError(f"{where}: rule {shown!r}: time is not deterministic; '==' cannot gate it",
                              "use <= or >= (a failure must exceed the run-to-run spread)")
    own = metric_unit(metric, kind)
    if own is not None and rule.stated_unit:
        if rule.value is not None:
            rule.limit_in(own)  # raises on a wrong unit
        elif convert_unit(1.0, rule.stated_unit, own) is None:
            raise ThresholdsError(f"{where}: rule {shown!r}: unit {rule.stated_unit!r} does not match {metric}, "
                                  f"which is in {own or 'a plain count (no unit)'}")
    return rule


def _number(text: str, where: str, shown: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ThresholdsError(f"{where}: rule {shown!r}: {text} is not a finite number")
    return value


def _rhs(rhs: str, where: str, shown: str, metric: str, kind: str, op: str) -> Rule:
    m = _REF.fullmatch(rhs)
    if m:
        if m.group("f1") and m.group("f2"):
            raise ThresholdsError(f"{where}: rule {shown!r}: give one factor, e.g. '1.10 * {m.group('ref')}'")
        factor = _number(m.group("f1") or m.group("f2") or "1", where, shown)
        if factor <= 0:
            raise ThresholdsError(f"{where}: rule {shown!r}: the factor must be positive")
        return Rule(shown, metric, kind, op, ref=m.group("ref"), factor=factor)
    m = _ABS.fullmatch(rhs)
    if m:
        return Rule(shown, metric, kind, op, value=_number(m.group("value"), where, shown),
                    stated_unit=m.group("unit") or "")
    raise ThresholdsError(f"{where}: cannot parse the limit {rhs!r} of rule {shown!r}",
                          "write a number with an optional unit ('25 %'), 'previous' or '1.10 * baseline'")


_TOP_KEYS = ("version", "description", "stage", "kernel")


_SECTION_KEYS = ("rules", "optional", "description")


_ITEM_KEYS = ("rule", "unit", "optional")


def _check_keys(table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            hint = closest_hint(str(key), list(allowed))
            raise ThresholdsError(f"{where}: unknown key {key!r}", hint or f"allowed keys: {', '.join(allowed)}")


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ThresholdsError(f"{where}: optional must be true or false, not {value!r}")
    return value


def _section_rules(section: Any, where: str, stage: str | None, kernel: str | None) -> list[Rule]:
    if not isinstance(section, dict):
        raise ThresholdsError(f"{where} must be a table", "e.g. [stage.smem] with rules = [\"...\"]")
    _check_keys(section, _SECTION_KEYS, where)
    optional = _bool(section.get("optional", False), f"{where}.optional")
    items = section.get("rules", [])
    if not isinstance(items, list) or not items:
        raise ThresholdsError(f"{where}.rules must be a non-empty list of rules",
                              "e.g. rules = [\"duration < previous\"]")
    out = []
    for i, item in enumerate(items):
        at = f"{where}.rules[{i}]"
        if isinstance(item, str):
            out.append(parse_rule(item, at, stage=stage, kernel=kernel, optional=optional))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("rule"), str):
            raise ThresholdsError(f"{at} must be a string or a table with rule = \"...\"")
        _check_keys(item, _ITEM_KEYS, at)
        unit = item.get("unit", "")
        if not isinstance(unit, str):
            raise ThresholdsError(f"{at}.unit must be a string such as \"%\" or \"us\"")
        opt = _bool(item.get("optional", optional), f"{at}.optional")
        out.append(parse_rule(item["rule"], at, unit=unit, stage=stage, kernel=kernel, optional=opt))
    return out


def parse_thresholds_data(data: Any, path: str = "<thresholds>") -> Thresholds:
    """Rules from an already-loaded TOML document (see the module docstring for the format).

    Raises:
        ThresholdsError: wrong structure, unknown keys, a bad regex or any bad rule.
    """
    if not isinstance(data, dict):
        raise ThresholdsError(f"{path}: the thresholds file must be a TOML table")
    _check_keys(data, _TOP_KEYS, path)
    if data.get("version", 1) != 1:
        raise ThresholdsError(f"{path}: version {data.get('version')!r} is not supported", "write version = 1")
    rules: list[Rule] = []
    for group in ("stage", "kernel"):
        sections = data.get(group, {})
        if not isinstance(sections, dict):
            raise ThresholdsError(f"{path}: {group} must be a table of sections", f"e.g. [{group}.NAME]")
        for name, section in sections.items():
            where = f"{path} [{group}.{name}]"
            if group == "kernel":
                try:
                    re.compile(name)
                except (re.error, OverflowError, RecursionError) as exc:
                    raise ThresholdsError(f"{where}: bad kernel-name regular expression ({exc})",
                                          'fix the pattern, e.g. [kernel."^transpose_(padded|unrolled)$"]') from exc
            rules.extend(_section_rules(section, where, name if group == "stage" else None,
                                        name if group == "kernel" else None))
    if not rules:
        raise ThresholdsError(f"{path} holds no rules", "add [stage.NAME] sections with rules = [\"...\"]")
    return Thresholds(rules, path)


def parse_thresholds(text: str, path: str = "<thresholds>") -> Thresholds:
    """Parse the text of a thresholds file.

    Raises:
        ThresholdsError: not TOML, or any error of :func:`parse_thresholds_data`.
    """
    try:
        data = tomllib.loads(text)
    except RecursionError as exc:
        raise ThresholdsError(f"{path}: its values nest too deeply to read",
                              'a thresholds file nests two levels: [stage.ID] with rules = ["..."]') from exc
    except tomllib.TOMLDecodeError as exc:
        raise ThresholdsError(f"{path} is not valid TOML ({exc})",
                              "fix the line and column named; a rule is a quoted string, "
                              'e.g. rules = ["shared_excessive_wavefronts == 0"]') from exc
    return parse_thresholds_data(data, path)


def default_thresholds() -> Path:
    """The default case's thresholds file: it gates that case's captures and those made elsewhere."""
    return resource_dir("kernels") / DEFAULT_CASE / "thresholds.toml"


def load_thresholds(path: Path | None = None) -> Thresholds:
    """Read and parse a thresholds file (default: the default case's, ``kernels/<case>/thresholds.toml``).

    Raises:
        ThresholdsError: the file is missing, a directory or not a regular file (``/dev/null``),
            unreadable, or does not parse.
    """
    given = path is not None
    path = Path(path) if path is not None else default_thresholds()
    if path.is_dir():
        raise ThresholdsError(f"thresholds file {path} is a directory", "pass the .toml file, e.g. --thresholds "
                              f"{path / 'thresholds.toml'}")
    if path.exists() and not path.is_file():
        raise ThresholdsError(f"thresholds file {path} is not a regular file (a device or a FIFO)",
                              "pass a .toml file")
    if not path.is_file():
        hint = "check the path" if given else "reinstall the package (it ships the file) or pass --thresholds FILE"
        raise ThresholdsError(f"thresholds file {path} not found", hint)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ThresholdsError(f"cannot read thresholds file {path} ({exc.__class__.__name__})",
                              "pass a readable UTF-8 text file") from exc
    return parse_thresholds(text, str(path))
