"""Check stage: a regression gate over the staged report, and run-to-run diffs.

A thresholds file (TOML) holds rules per stage or per kernel-name regex; each rule is one line of
a tiny grammar::

    METRIC OP LIMIT [UNIT]          e.g.  "global_store_efficiency_pct <= 25 %"
    METRIC OP [FACTOR *] previous   e.g.  "duration < previous"
    METRIC OP [FACTOR *] baseline   e.g.  "duration <= 1.10 * baseline"

METRIC is a headline column of the per-stage summary (:data:`profiler_report.analyze.HEADLINE`),
an event-timing column (:data:`profiler_report.analyze.TIMING_COLUMNS`, ``duration`` is the
event-timed median) or any raw Nsight Compute metric name; OP is one of ``== <= >= < >``.

Parsing (:func:`parse_thresholds`) turns the file into :class:`Rule` objects and refuses what
cannot be gated (unknown names, nvprof names, raw bank-conflict counters, single profiled
durations, wrong units) with a :class:`~profiler_report.errors.ThresholdsError`. Each rule has a
pure :meth:`Rule.evaluate` that returns a :class:`Result` with a readable message:

* counts and ratios (sectors, wavefronts, instructions, efficiencies) are deterministic and are
  compared exactly (up to 1e-9 relative, for float rounding of derived ratios);
* time is compared on event timings (``timings.json`` beside the capture: median, p10, p90 of
  repeated CUDA-event-timed launches), never on ncu's single profiled ``gpu__time_duration``. The
  median decides a pass; a failure must also lie beyond the run-to-run spread: an upper bound
  (``<``, ``<=``) fails only when the measured p10 violates the limit's p90 side (``factor *
  reference p90``; an absolute limit has no spread), a lower bound only when the measured p90
  violates the limit's p10 side;
* a metric the capture does not hold is "not measured", never a pass.

:func:`diff_summaries` compares two runs' headline metrics per stage; :func:`comparability` says
what makes two runs not comparable (GPU, driver, ncu version, clock and cache control, --set,
size, dtype).
"""

from __future__ import annotations

import difflib
import math
import operator
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .analyze import COLLECTED_BY, HEADLINE, HEADLINE_BY_NAME, TIMING_COLUMNS, Analysis, analyze
from .errors import InputError, ThresholdsError
from .extract import Capture, normalize_unit, read_capture
from .fsio import atomic_write

if TYPE_CHECKING:
    from .driver import StepTimer
    from .readahead import PendingRead

#: Default thresholds file, looked up in the current directory.
DEFAULT_THRESHOLDS = Path("thresholds.toml")

OPS: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
}
UPPER_OPS = ("<", "<=")
REFS = ("baseline", "previous")
#: Relative slack of an "exact" comparison: float rounding of derived ratios, nothing more.
EXACT_REL = 1e-9

TIMING_BY_NAME = {c.name: c for c in TIMING_COLUMNS}
#: Friendly names for metrics.
ALIASES = {"duration": "event_median_us"}

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

_CONFLICT_MSG = ("is a raw hardware counter: not zero on conflict-free code and different from run to run; "
                 "gate bank conflicts on shared_excessive_wavefronts (derived__memory_l1_wavefronts_shared_excessive) "
                 "or shared_wavefronts_per_load / shared_wavefronts_per_store")
_SINGLE_TIME_MSG = ("comes from a single profiled launch (gpu__time_duration under ncu); gate time on event timings: "
                    "`duration` (event-timed median, timings.json) or event_gbps, e.g. 'duration <= 1.10 * baseline'")
#: (pattern, why) for names a rule may not use.
REFUSED = (
    (re.compile(r"^bank_conflicts_(ld|st)_raw$"), _CONFLICT_MSG),
    (re.compile(r"^l1tex__data_bank_conflicts_pipe_lsu"), _CONFLICT_MSG),
    (re.compile(r"^(duration_us|dram_throughput_gbps|dram_throughput_pct_peak)$"), _SINGLE_TIME_MSG),
    (re.compile(r"^gpu__time_duration"), _SINGLE_TIME_MSG),
)

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_RULE = re.compile(r"\s*(?P<metric>[A-Za-z_][\w.]*)\s*(?P<op>==|<=|>=|<|>)\s*(?P<rhs>.*?)\s*", re.S)
_REF = re.compile(rf"(?:(?P<f1>{_NUM})\s*\*\s*)?(?P<ref>baseline|previous)(?:\s*\*\s*(?P<f2>{_NUM}))?")
_ABS = re.compile(rf"(?P<value>{_NUM})\s*(?P<unit>[A-Za-z%/]+)?")
_RAW_NCU = re.compile(r"^[a-z0-9]+__\w+(\.\w+)*$")

_UNIT_ALIASES = {"B": "byte", "bytes": "byte", "KB": "Kbyte", "MB": "Mbyte", "GB": "Gbyte", "GB/s": "Gbyte/s",
                 "MB/s": "Mbyte/s", "TB/s": "Tbyte/s", "percent": "%", "pct": "%", "µs": "us", "usec": "us",
                 "msec": "ms", "sec": "s", "nsec": "ns"}


# ---------------------------------------------------------------------------------------------
# Rules and results


@dataclass(frozen=True)
class Band:
    """A measured value with its run-to-run spread, in ``unit``.

    For counts ``lo == hi == value``; for event timings ``lo``/``hi`` are the p10/p90 side.
    """

    value: float
    lo: float
    hi: float
    unit: str = ""

    @classmethod
    def point(cls, value: float, unit: str = "") -> Band:
        return cls(value, value, value, unit)

    def scaled(self, factor: float) -> Band:
        lo, hi = sorted((self.lo * factor, self.hi * factor))
        return Band(self.value * factor, lo, hi, self.unit)


@dataclass(frozen=True)
class Result:
    """One rule judged on one stage.

    ``verdict`` is "pass", "fail", "not measured" or "skipped"; ``measured`` and ``limit`` are in
    ``unit`` (NaN when unknown); ``message`` says why, in one line.
    """

    stage: str
    rule: str
    metric: str
    measured: float
    limit: float
    unit: str
    verdict: str
    message: str


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``metric op [factor *] (value | ref)`` on a stage or a kernel-name regex.

    ``kind`` is "headline" (summary column, exact), "timing" (event timing, spread-aware) or
    "raw" (an Nsight Compute metric read from the capture, exact). ``value`` is as written, in
    ``stated_unit`` (or the metric's unit when none is stated).
    """

    text: str
    metric: str
    kind: str
    op: str
    value: float | None = None
    ref: str | None = None
    factor: float = 1.0
    stated_unit: str = ""
    stage: str | None = None
    kernel: str | None = None
    optional: bool = False
    where: str = ""

    @property
    def target(self) -> str:
        """How the rule names what it applies to: the stage, or ``kernel~REGEX``."""
        return self.stage if self.stage is not None else f"kernel~{self.kernel}"

    def limit_in(self, unit: str) -> float:
        """The absolute limit in ``unit`` (the measured metric's unit).

        Raises:
            ThresholdsError: the stated unit does not convert to ``unit``.
        """
        assert self.value is not None
        if not self.stated_unit:
            return self.value
        converted = convert_unit(self.value, self.stated_unit, unit)
        if converted is None:
            raise ThresholdsError(f"{self.where}: rule '{self.text}': unit {self.stated_unit!r} does not match "
                                  f"{self.metric}, which is in {unit or 'a plain count (no unit)'}",
                                  f"write the limit in {unit or 'a plain number'}" if unit else "drop the unit")
        return converted

    def evaluate(self, stage: str, measured: Band | None, reference: Band | None = None,
                 why_missing: str = "") -> Result:
        """Judge the rule on one stage's measurement (pure: no I/O).

        Args:
            stage: the stage the measurement belongs to.
            measured: the metric on that stage; None when not measured.
            reference: the same metric on the previous stage or the baseline (relative rules
                only); None when not measured there.
            why_missing: why ``measured`` or ``reference`` is None, for the message.

        Returns:
            A :class:`Result`; "not measured" when a value is missing, never "pass".

        Raises:
            ThresholdsError: a stated unit does not match the metric's unit.
        """
        unit = measured.unit if measured is not None else (reference.unit if reference is not None else "")
        if measured is None or (self.ref is not None and reference is None):
            return Result(stage, self.text, self.metric, measured.value if measured else math.nan, math.nan,
                          unit, "not measured", why_missing or "not measured")
        limit = reference.scaled(self.factor) if reference is not None else Band.point(self.limit_in(unit), unit)
        if self.kind == "timing":
            return self._judge_spread(stage, measured, limit)
        ok = compare_exact(self.op, measured.value, limit.value)
        msg = f"{self.metric} = {fmt_value(measured.value, unit)}, " \
              f"{'within' if ok else 'expected'} {self.op} {fmt_value(limit.value, unit)}{self._of()}"
        return Result(stage, self.text, self.metric, measured.value, limit.value, unit,
                      "pass" if ok else "fail", msg)

    def _of(self) -> str:
        if self.ref is None:
            return ""
        return f" ({self.factor:g} x {self.ref})" if self.factor != 1 else f" ({self.ref})"

    def _judge_spread(self, stage: str, m: Band, limit: Band) -> Result:
        unit = m.unit
        op = OPS[self.op]
        base = f"{self.metric} median {fmt_value(m.value, unit)} vs limit {fmt_value(limit.value, unit)}" \
               f"{self._of()}"
        if op(m.value, limit.value):
            return Result(stage, self.text, self.metric, m.value, limit.value, unit, "pass", base + ": within")
        if self.op in UPPER_OPS:
            edge, other, side = m.lo, limit.hi, "p10"
        else:
            edge, other, side = m.hi, limit.lo, "p90"
        if op(edge, other):
            return Result(stage, self.text, self.metric, m.value, limit.value, unit, "pass",
                          base + f": median misses, but within the run-to-run spread (measured {side} "
                          f"{fmt_value(edge, unit)} {self.op} {fmt_value(other, unit)})")
        return Result(stage, self.text, self.metric, m.value, limit.value, unit, "fail",
                      base + f": fails beyond the run-to-run spread (measured {side} {fmt_value(edge, unit)}, "
                      f"expected {self.op} {fmt_value(other, unit)})")


def compare_exact(op: str, x: float, y: float) -> bool:
    """``x op y`` for deterministic counts, with :data:`EXACT_REL` slack for float rounding only."""
    eps = EXACT_REL * max(abs(x), abs(y))
    if op == "==":
        return abs(x - y) <= eps
    if op == "<=":
        return x <= y + eps
    if op == ">=":
        return x >= y - eps
    if op == "<":
        return x < y - eps
    return x > y + eps


def _canon_unit(unit: str) -> str:
    return "/".join(p[:-1] if p.endswith("s") and len(p) > 3 else p for p in unit.split("/"))


def convert_unit(value: float, from_unit: str, to_unit: str) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; None when the two are not the same kind.

    Prefixes and time units convert (``40 us`` -> ``0.04 ms``, ``64 MB`` -> byte); ``%`` only
    matches ``%``.
    """
    a, ua = normalize_unit(value, _UNIT_ALIASES.get(from_unit, from_unit))
    b, ub = normalize_unit(1.0, _UNIT_ALIASES.get(to_unit, to_unit))
    if _canon_unit(ua) != _canon_unit(ub) or b == 0:
        return None
    return a / b


def fmt_value(x: float, unit: str = "") -> str:
    """'16,252,928 wavefront', '12.5 %', '34.66 us'; NaN -> 'not measured'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "not measured"
    if math.isinf(x):
        text = "inf" if x > 0 else "-inf"
    elif x == int(x) and abs(x) < 1e15:
        text = f"{int(x):,}"
    elif abs(x) >= 1000:
        text = f"{x:,.0f}"
    else:
        text = f"{x:.4g}"
    return f"{text} {unit}".strip()


# ---------------------------------------------------------------------------------------------
# Parsing


@dataclass
class Thresholds:
    """A parsed thresholds file: its rules, in file order."""

    rules: list[Rule]
    path: str = "<thresholds>"


def _closest(name: str, pool: list[str]) -> str:
    near = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
    return f"did you mean {', '.join(near)}?" if near else ""


def metric_names() -> list[str]:
    """Every name a rule may use besides raw ncu metrics: headline and timing columns, aliases."""
    refused = {"bank_conflicts_ld_raw", "bank_conflicts_st_raw", "duration_us", "dram_throughput_gbps",
               "dram_throughput_pct_peak"}
    return [c.name for c in (*HEADLINE, *TIMING_COLUMNS) if c.name not in refused] + list(ALIASES)


def resolve_metric(name: str, where: str) -> tuple[str, str]:
    """(canonical metric name, kind) for a name written in a rule.

    Kinds: "headline", "timing", "raw" (anything shaped like an ncu metric: ``unit__counter...``).

    Raises:
        ThresholdsError: an nvprof name (names its ncu replacement), a refused name (raw
            bank-conflict counters, single-launch durations), or an unknown name (closest names).
    """
    for pattern, why in REFUSED:
        if pattern.search(name):
            raise ThresholdsError(f"{where}: {name} {why}")
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
    hint = _closest(name, metric_names())
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
    if unit and rule.stated_unit and _canon_unit(unit) != _canon_unit(rule.stated_unit):
        raise ThresholdsError(f"{where}: rule {shown!r} states unit {rule.stated_unit!r} but unit = {unit!r}")
    if unit and not rule.stated_unit and rule.value is not None:
        shown = f"{shown} {unit}"
    rule = Rule(shown, metric, kind, rule.op, rule.value, rule.ref, rule.factor, rule.stated_unit or unit,
                stage, kernel, optional, where)
    if kind == "timing" and rule.op == "==":
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
            hint = _closest(str(key), list(allowed))
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
                    raise ThresholdsError(f"{where}: bad kernel-name regular expression ({exc})") from exc
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
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ThresholdsError(f"{path} is not valid TOML ({exc})") from exc
    return parse_thresholds_data(data, path)


def load_thresholds(path: Path | None = None) -> Thresholds:
    """Read and parse a thresholds file (default: ``thresholds.toml`` in the current directory).

    Raises:
        ThresholdsError: the file is missing, unreadable, or does not parse.
    """
    given = path is not None
    path = Path(path) if given else DEFAULT_THRESHOLDS
    if not path.is_file():
        hint = "check the path" if given else \
            "run from the repository root (it ships thresholds.toml) or pass --thresholds FILE"
        raise ThresholdsError(f"thresholds file {path} not found", hint)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ThresholdsError(f"cannot read thresholds file {path} ({exc.__class__.__name__})") from exc
    return parse_thresholds(text, str(path))


# ---------------------------------------------------------------------------------------------
# Runs: a capture with its sidecars, analyzed


@dataclass
class Run:
    """One capture ready to check: the analysis, its sidecars and what makes it comparable."""

    path: Path
    capture: Capture
    analysis: Analysis
    sidecars: Any  # report.Sidecars: timings.json, provenance.json, validation.json, ...
    manifest: Any = None  # config.Manifest for the project's own captures, else None

    @property
    def timings(self) -> list[dict[str, Any]] | None:
        """timings.json entries (name, median_us, p10_us, p90_us, gbps, ...); None when absent."""
        return self.sidecars.timings or None

    @property
    def provenance(self) -> dict[str, Any]:
        """provenance.json, {} when absent."""
        prov = self.sidecars.provenance
        return prov if isinstance(prov, dict) else {}

    @property
    def summary(self) -> pd.DataFrame:
        return self.analysis.summary

    def stages(self) -> list[str]:
        """Every stage label (ceiling rows included), in launch order."""
        return [str(s) for s in self.summary["stage"]]


_TIMING_KEYS = ("name", "median_us", "p10_us", "p90_us", "gbps")


def load_run(path: Path, labels: list[tuple[str, str]] | None = None) -> Run:
    """Read, label and analyze a capture plus ``timings.json`` / ``provenance.json`` beside it.

    Raises:
        ReportUnreadableError: the capture cannot be read.
        InputError: a sidecar is corrupt, or a ``--stage`` pattern is bad.
    """
    from .config import load_manifest
    from .report import own_manifest_for, read_sidecars

    path = Path(path)
    capture = read_capture(path)
    side = read_sidecars(path.parent)
    timings = side.timings
    if timings is not None:
        if not isinstance(timings, list) or not all(isinstance(t, dict) and all(k in t for k in _TIMING_KEYS)
                                                    for t in timings):
            raise InputError(f"{path.parent / 'timings.json'}: 'timings' must list entries with "
                             + ", ".join(_TIMING_KEYS), "regenerate it with `profiler-report run`")
    manifest = None if labels else own_manifest_for(capture, load_manifest())
    analysis = analyze(capture, manifest, labels, timings)
    return Run(path, capture, analysis, side, manifest)


# ---------------------------------------------------------------------------------------------
# Measuring and checking


def _row(run: Run, stage: str) -> pd.Series:
    s = run.summary
    return s[s["stage"] == stage].iloc[0]


def measure(run: Run, stage: str, rule: Rule) -> tuple[Band | None, str]:
    """(value with its spread, why it is missing) of ``rule.metric`` on ``stage`` of ``run``.

    Headline values come from the summary (base units as in HEADLINE); timing values from
    ``timings.json`` (median with p10/p90; GB/s and % bands scale by median/p90 .. median/p10);
    raw values from the capture's metric table (units as normalized by extract).
    """
    row = _row(run, stage)
    if rule.kind == "headline":
        col = HEADLINE_BY_NAME[rule.metric]
        v = float(row.get(rule.metric, math.nan))
        if math.isnan(v):
            return None, f"{rule.metric} not measured on {stage}: the capture lacks {_needs(col.source)}"
        return Band.point(v, col.unit), ""
    if rule.kind == "timing":
        return _timing_band(run, row, stage, rule.metric)
    v = run.capture.value(int(row["launch_id"]), rule.metric)
    if math.isnan(v):
        near = _closest(rule.metric, sorted(set(run.capture.metrics["metric"])))
        return None, (f"{rule.metric} not measured on {stage}: the capture does not hold it (another architecture, "
                      f"ncu version or --set?){' ' + near if near else ''}")
    m = run.capture.metrics
    unit = m.loc[(m["launch_id"] == row["launch_id"]) & (m["metric"] == rule.metric), "unit"].iloc[0]
    return Band.point(v, str(unit)), ""


def _needs(source: str) -> str:
    names = re.findall(r"[a-z0-9_]+__[\w.]+|memory_l1_\w+", source)
    collect = sorted({COLLECTED_BY[n] for n in names if n in COLLECTED_BY})
    return " and ".join(dict.fromkeys(names)) + (f" (collect with {'; '.join(collect)})" if collect else "")


def _timing_band(run: Run, row: pd.Series, stage: str, metric: str) -> tuple[Band | None, str]:
    unit = TIMING_BY_NAME[metric].unit
    if not run.timings:
        return None, (f"{metric} not measured: no event timings (timings.json) beside {run.path}; "
                      "time is never gated on the single profiled duration")
    v = float(row.get(metric, math.nan))
    if math.isnan(v):
        return None, f"{metric} not measured: timings.json has no entry for stage {stage}"
    med, p10, p90 = (float(row.get(c, math.nan)) for c in ("event_median_us", "event_p10_us", "event_p90_us"))
    if metric == "event_median_us":
        lo, hi = p10, p90
    elif metric in ("event_p10_us", "event_p90_us"):
        lo = hi = v
    else:  # throughput-like: inversely proportional to time
        lo, hi = (v * med / p90, v * med / p10) if p10 > 0 and p90 > 0 else (v, v)
    lo = v if math.isnan(lo) else lo
    hi = v if math.isnan(hi) else hi
    return Band(v, min(lo, v), max(hi, v), unit), ""


def targets(rule: Rule, run: Run) -> list[str]:
    """The stages of ``run`` a rule applies to; [] when none and the rule is optional.

    Raises:
        ThresholdsError: a required stage is not in the capture, or a kernel regex matches none
            (the message lists the closest stage names).
    """
    stages = run.stages()
    if rule.stage is not None:
        if rule.stage in stages:
            return [rule.stage]
        found: list[str] = []
    else:
        found = [s for s, k in zip(run.summary["stage"], run.summary["kernel"], strict=True)
                 if re.search(str(rule.kernel), str(k))]
        if found:
            return found
    if rule.optional:
        return []
    what = f"stage {rule.stage!r}" if rule.stage is not None else f"a kernel matching {rule.kernel!r}"
    near = _closest(rule.stage, stages) if rule.stage is not None else ""
    raise ThresholdsError(f"{rule.where}: {what} is not in {run.path} (stages: {', '.join(stages)})",
                          near or "mark the section optional = true if the stage may be absent")


def _previous(run: Run, stage: str) -> str | None:
    only = [s for s, r in zip(run.summary["stage"], run.summary["role"], strict=True) if r == "stage"]
    if stage not in only or only.index(stage) == 0:
        return None
    return only[only.index(stage) - 1]


def _reference(rule: Rule, run: Run, stage: str, baseline: Run | None) -> tuple[Band | None, str]:
    if rule.ref == "previous":
        prev = _previous(run, stage)
        if prev is None:
            return None, f"{stage} has no previous stage in {run.path}"
        band, why = measure(run, prev, rule)
        return band, why and f"previous stage {prev}: {why}"
    assert baseline is not None
    if stage not in baseline.stages():
        return None, f"the baseline {baseline.path} has no stage {stage!r}"
    band, why = measure(baseline, stage, rule)
    return band, why and f"baseline: {why}"


def check_run(thresholds: Thresholds, run: Run, baseline: Run | None = None) -> list[Result]:
    """Every rule judged on every stage it applies to, in file order.

    Rules on an optional stage the capture lacks, and rules relative to ``baseline`` when there
    is none, come back "skipped".

    Raises:
        ThresholdsError: a required stage is missing, or a stated unit does not match a raw
            metric's unit in the capture.
    """
    for rule in thresholds.rules:  # all stage errors first: exit 2 before any verdict
        targets(rule, run)
    results = []
    for rule in thresholds.rules:
        hits = targets(rule, run)
        if not hits:
            results.append(Result(rule.target, rule.text, rule.metric, math.nan, math.nan, "", "skipped",
                                  f"stage not in {run.path} (optional)"))
        for stage in hits:
            results.append(_judge(rule, run, stage, baseline))
    return results


def _judge(rule: Rule, run: Run, stage: str, baseline: Run | None) -> Result:
    if rule.ref == "baseline" and baseline is None:
        return Result(stage, rule.text, rule.metric, math.nan, math.nan, "", "skipped",
                      "compares with a baseline; pass --baseline OLD.ncu-rep")
    measured, why = measure(run, stage, rule)
    reference, why_ref = (None, "")
    if rule.ref is not None:
        reference, why_ref = _reference(rule, run, stage, baseline)
    return rule.evaluate(stage, measured, reference, why or why_ref)


def exit_code(results: list[Result], missing: str = "fail") -> int:
    """0 when every rule passed (or was skipped), 1 when any failed; "not measured" counts as a
    failure under ``missing="fail"`` and is only reported under ``missing="warn"``."""
    if any(r.verdict == "fail" for r in results):
        return 1
    if missing == "fail" and any(r.verdict == "not measured" for r in results):
        return 1
    return 0


def counts(results: list[Result]) -> dict[str, int]:
    """verdict -> number of results."""
    out = {"pass": 0, "fail": 0, "not measured": 0, "skipped": 0}
    for r in results:
        out[r.verdict] = out.get(r.verdict, 0) + 1
    return out


# ---------------------------------------------------------------------------------------------
# Output: table, JSON, JUnit


def results_table(results: list[Result]) -> str:
    """Plain-text table: stage, rule, measured, limit, verdict."""
    head = ("stage", "rule", "measured", "limit", "verdict")
    rows = [(r.stage, r.rule, fmt_value(r.measured, r.unit) if r.verdict != "skipped" else "-",
             fmt_value(r.limit, r.unit) if not math.isnan(r.limit) else "-",
             r.verdict.upper() if r.verdict == "fail" else r.verdict) for r in results]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
             for row in (head, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


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


def _json_num(x: float) -> float | None:
    return None if isinstance(x, float) and not math.isfinite(x) else x


def results_json(results: list[Result], **meta: Any) -> dict[str, Any]:
    """JSON-ready dict: ``meta`` (capture, thresholds, baseline, ...), results, counts."""
    return {**meta, "counts": counts(results),
            "results": [{"stage": r.stage, "rule": r.rule, "metric": r.metric, "measured": _json_num(r.measured),
                         "limit": _json_num(r.limit), "unit": r.unit, "verdict": r.verdict, "message": r.message}
                        for r in results]}


def junit_tree(results: list[Result], missing: str = "fail", name: str = "profiler-report check",
               properties: dict[str, str] | None = None) -> ET.ElementTree:
    """JUnit XML: one ``testcase`` per rule and stage; failures (and "not measured" under
    ``missing="fail"``) get a ``failure`` element, skipped and warned ones a ``skipped`` element."""
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
        if r.verdict == "fail" or (r.verdict == "not measured" and missing == "fail"):
            el = ET.SubElement(case, "failure", {"message": r.message, "type": r.verdict.replace(" ", "-")})
            el.text = r.message
        elif r.verdict in ("skipped", "not measured"):
            ET.SubElement(case, "skipped", {"message": f"{r.verdict}: {r.message}"})
    ET.indent(root)
    return ET.ElementTree(root)


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


def write_junit(path: Path, results: list[Result], missing: str = "fail",
                properties: dict[str, str] | None = None) -> None:
    """Write :func:`junit_tree` to ``path`` atomically (UTF-8, with an XML declaration)."""
    tree = junit_tree(results, missing, properties=properties)
    write_atomic(path, ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True) + b"\n")


# ---------------------------------------------------------------------------------------------
# Comparability


#: Keys of provenance.json that make two runs comparable (compared where both sides have them).
COMPARABLE_KEYS = ("gpu", "sm_count", "driver", "ncu_version", "clock_control", "cache_control", "section_set",
                   "rows", "cols", "profile_rows", "profile_cols", "dtype")
_CXX_DTYPES = {"float": "float32", "double": "float64", "unsigned short": "float16", "__half": "float16",
               "half": "float16"}
_VERSION = re.compile(r"\d{4}\.\d+(?:\.\d+)?")


def run_identity(capture: Capture, provenance: dict[str, Any] | None) -> dict[str, str]:
    """What makes a run comparable, as strings: provenance.json's :data:`COMPARABLE_KEYS` when
    recorded, else what the capture holds (GPU name and SM count from ``device__attribute_*``,
    the dtype from the kernels' template argument)."""
    prov = provenance or {}
    ident = {k: str(prov[k]) for k in COMPARABLE_KEYS if k in prov and prov[k] not in (None, "")}
    dev = capture.device
    for key in ("gpu", "sm_count"):
        if key not in ident and key in dev:
            ident[key] = str(dev[key])
    if "ncu_version" in ident:
        m = _VERSION.search(ident["ncu_version"])
        ident["ncu_version"] = m.group(0) if m else ident["ncu_version"]
    if "dtype" not in ident:
        # The first template argument is the element type (transpose_vec_deep<float, (int)2>).
        args = {m.group(1).split(",")[0].strip() for d in capture.launches()["demangled"]
                for m in [re.search(r"<([^<>]+)>\s*\(", str(d))] if m}
        if len(args) == 1 and next(iter(args)) in _CXX_DTYPES:
            ident["dtype"] = _CXX_DTYPES[next(iter(args))]
    return ident


def comparability(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """'key: old vs new' for each key both identities hold with different values; [] when comparable."""
    return [f"{k}: {old[k]} vs {new[k]}" for k in COMPARABLE_KEYS if k in old and k in new and old[k] != new[k]]


def require_comparable(old: Run, new: Run, strict: bool) -> list[str]:
    """The differences between two runs; under ``strict`` any difference is an error.

    Raises:
        InputError: ``strict`` and the runs are not comparable.
    """
    diffs = comparability(run_identity(old.capture, old.provenance), run_identity(new.capture, new.provenance))
    if diffs and strict:
        raise InputError(f"{old.path} and {new.path} are not comparable: {'; '.join(diffs)}",
                         "compare runs recorded the same way, or drop --strict to compare anyway")
    return diffs


# ---------------------------------------------------------------------------------------------
# Diff


#: Summary columns a diff compares. The raw bank-conflict counters are left out (they differ
#: between identical runs); single-launch times are shown but never flagged.
DIFF_METRICS: tuple[str, ...] = tuple(
    c.name for c in (*HEADLINE, *TIMING_COLUMNS)
    if c.name not in ("bank_conflicts_ld_raw", "bank_conflicts_st_raw", "event_p10_us", "event_p90_us")
)
SINGLE_LAUNCH_TIME = ("duration_us", "dram_throughput_gbps", "dram_throughput_pct_peak")
DIFF_COLUMNS = ["stage", "metric", "unit", "old", "new", "change", "flagged", "note"]


def _unit_of(name: str) -> str:
    col = HEADLINE_BY_NAME.get(name) or TIMING_BY_NAME.get(name)
    return col.unit if col else ""


def _spread_separates(old: pd.Series, new: pd.Series) -> bool:
    """True when the event-timing bands p10..p90 of the two runs do not overlap."""
    vals = [float(x.get(c, math.nan)) for x in (old, new) for c in ("event_p10_us", "event_p90_us")]
    if any(math.isnan(v) for v in vals):
        return False
    return vals[2] > vals[1] or vals[3] < vals[0]


def _diff_row(stage: str, name: str, old: pd.Series, new: pd.Series, tolerance: float) -> dict[str, Any] | None:
    a, b = float(old.get(name, math.nan)), float(new.get(name, math.nan))
    if math.isnan(a) and math.isnan(b):
        return None
    row = {"stage": stage, "metric": name, "unit": _unit_of(name), "old": a, "new": b, "change": math.nan,
           "flagged": False, "note": ""}
    if math.isnan(a) or math.isnan(b):
        row["note"] = f"not measured in {'old' if math.isnan(a) else 'new'}"
        return row
    if a != 0:
        row["change"] = (b - a) / abs(a)
        beyond = abs(b - a) > tolerance * abs(a)
    else:
        row["change"] = 0.0 if b == 0 else math.nan
        beyond = b != 0
    if name in SINGLE_LAUNCH_TIME:
        row["note"] = "single profiled launch: not flagged (time is flagged on event timings)"
    elif name in TIMING_BY_NAME:
        row["flagged"] = beyond and _spread_separates(old, new)
        if beyond and not row["flagged"]:
            row["note"] = "within the run-to-run spread (p10..p90 overlap)"
    else:
        row["flagged"] = beyond
    return row


def diff_summaries(old: pd.DataFrame, new: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """Per stage, each headline metric old, new and change between two summaries.

    Args:
        old, new: :attr:`Analysis.summary` frames (headline columns in their HEADLINE units).
        tolerance: relative change beyond which a count or ratio is flagged (0.05 = 5 %).

    Returns:
        Columns :data:`DIFF_COLUMNS`: stage, metric, unit, old, new, change (relative,
        (new - old) / |old|; NaN when old is 0 and new is not, or one side is missing),
        flagged (bool), note. Stages present on one side only get one row, metric "(stage)",
        flagged. Event timings are flagged only when, beyond the tolerance, their p10..p90 bands
        do not overlap; single-launch times (duration_us and the DRAM throughput derived from it)
        are never flagged; the raw bank-conflict counters are not compared.
    """
    rows: list[dict[str, Any]] = []
    old_stages, new_stages = list(old["stage"]), list(new["stage"])
    for stage in dict.fromkeys([*new_stages, *old_stages]):
        if stage not in old_stages or stage not in new_stages:
            side = "old" if stage in old_stages else "new"
            rows.append({"stage": stage, "metric": "(stage)", "unit": "", "old": math.nan, "new": math.nan,
                         "change": math.nan, "flagged": True, "note": f"stage only in {side}"})
            continue
        a, b = old[old["stage"] == stage].iloc[0], new[new["stage"] == stage].iloc[0]
        for name in DIFF_METRICS:
            row = _diff_row(stage, name, a, b, tolerance)
            if row is not None:
                rows.append(row)
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def fmt_change(change: float, old: float = math.nan) -> str:
    """'+12.5%', '=', 'from 0' (old was 0), '' (unknown)."""
    if math.isnan(change):
        return "from 0" if old == 0 else ""
    if change == 0:
        return "="
    return f"{change:+.1%}"


def _cell(x: float, unit: str, metric: str) -> str:
    return "-" if metric == "(stage)" else fmt_value(x, unit)


def diff_table(frame: pd.DataFrame, flagged_only: bool = False) -> str:
    """Plain-text table of :func:`diff_summaries`; '!!' marks a flagged row."""
    sub = frame[frame["flagged"]] if flagged_only else frame
    head = ("", "stage", "metric", "old", "new", "change", "note")
    rows = [("!!" if r.flagged else "", r.stage, r.metric, _cell(r.old, r.unit, r.metric),
             _cell(r.new, r.unit, r.metric), fmt_change(r.change, r.old), r.note) for r in sub.itertuples()]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip() for row in (head, *rows)]
    return "\n".join(lines)


def comparison_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows for the report's comparison section: stage, metric label, old, new, change, flagged, note."""
    out = []
    for r in frame.itertuples():
        col = HEADLINE_BY_NAME.get(r.metric) or TIMING_BY_NAME.get(r.metric)
        out.append({"stage": r.stage, "metric": col.label if col else r.metric,
                    "old": _cell(r.old, r.unit, r.metric), "new": _cell(r.new, r.unit, r.metric),
                    "change": fmt_change(r.change, r.old),
                    "flagged": bool(r.flagged), "note": r.note})
    return out


def render_with_baseline(capture_path: Path, out: Path, baseline_path: Path, *,
                         labels: list[tuple[str, str]] | None = None, tolerance: float = 0.05,
                         strict: bool = False, pending: PendingRead | None = None,
                         timer: StepTimer | None = None, chart_workers: int = 1) -> tuple[list[Path], list[str]]:
    """Render the report of ``capture_path`` into ``out`` with a comparison against a baseline.

    ``pending``, ``timer`` and ``chart_workers`` are as for :func:`profiler_report.report.render_capture`;
    reading and analyzing both runs for the comparison is the timer's step "compare".

    Returns:
        (files written, comparability differences).

    Raises:
        ReportUnreadableError: either capture cannot be read.
        InputError: a sidecar is corrupt; ``strict`` and the runs are not comparable.
    """
    from .driver import StepTimer
    from .report import render_capture

    timer = timer or StepTimer(progress=False)
    with timer.step("compare"):
        new, old = load_run(capture_path, labels), load_run(baseline_path, labels)
        diffs = require_comparable(old, new, strict)

    def add_comparison(page: Any, analysis: Analysis) -> None:
        page.comparison = comparison_rows(diff_summaries(old.summary, analysis.summary, tolerance))
        page.comparison_note = (f"Baseline: {baseline_path}. Flagged: a count or ratio changed by more than "
                                f"{tolerance:.0%}, or event timings moved beyond their p10..p90 spread."
                                + (f" Not comparable: {'; '.join(diffs)}." if diffs else ""))

    _, files = render_capture(capture_path, out, labels=labels, page_hook=add_comparison, pending=pending,
                              timer=timer, chart_workers=chart_workers)
    return files, diffs


__all__ = [
    "Band", "Result", "Rule", "Run", "Thresholds", "check_run", "comparability", "diff_summaries", "exit_code",
    "load_run", "load_thresholds", "parse_rule", "parse_thresholds", "parse_thresholds_data", "run_identity",
    "write_junit",
]
