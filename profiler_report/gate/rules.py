"""The gate's value objects and the judgement of one rule on one stage.

Middle of the gate: :mod:`.grammar` turns a thresholds file into :class:`Rule` objects;
:mod:`.evaluate` measures each rule's metric on a run as a :class:`Band` and calls
:meth:`Rule.evaluate`, which is pure (no I/O, no run) and returns a :class:`Result`;
:mod:`.output` prints the results. Counts and ratios are compared exactly
(:func:`compare_exact`); event timings with their run-to-run spread. Units convert through
:func:`convert_unit`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, replace

from profiler_report.analysis.compare import fmt_value
from profiler_report.capture.units import normalize_unit
from profiler_report.errors import ThresholdsError
from profiler_report.metrics import TIMING_COLUMNS

#: Comparison operator of a rule -> its function.
OPS: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
}


#: Operators that bound a metric from above (a failure is judged on the measured p10).
UPPER_OPS = ("<", "<=")


#: Relative slack of an "exact" comparison: float rounding of derived ratios, nothing more.
EXACT_REL = 1e-9


#: Event-timing column name -> its column (median, p10, p90, GB/s, % of memcpy...).
TIMING_BY_NAME = {c.name: c for c in TIMING_COLUMNS}


#: Friendly names a rule may use for a metric -> the metric.
ALIASES = {"duration": "event_median_us"}


#: Units as people write them -> as :func:`~profiler_report.capture.units.normalize_unit` reads them.
_UNIT_ALIASES = {"B": "byte", "bytes": "byte", "KB": "Kbyte", "kB": "Kbyte", "MB": "Mbyte", "GB": "Gbyte",
                 "TB": "Tbyte", "GB/s": "Gbyte/s", "MB/s": "Mbyte/s", "TB/s": "Tbyte/s", "percent": "%", "pct": "%",
                 "usec": "us", "msec": "ms", "sec": "s", "nsec": "ns"}


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
        """A value without spread (a count, a ratio, an absolute limit)."""
        return cls(value, value, value, unit)

    def scaled(self, factor: float) -> Band:
        """The band times ``factor`` (``1.10 * baseline``); ``lo <= hi`` whatever the sign."""
        lo, hi = sorted((self.lo * factor, self.hi * factor))
        return Band(self.value * factor, lo, hi, self.unit)


@dataclass(frozen=True)
class Result:
    """One rule judged on one stage.

    ``verdict`` is "pass", "fail", "not measured" or "skipped"; ``measured`` and ``limit`` are in
    ``unit`` (NaN when unknown); ``message`` says why, in one line. ``source`` says, for a metric
    with a fallback formula (``shared_excessive_wavefronts``), whether the value was ncu's metric
    ("ncu") or computed from its inputs ("computed"); "" for every other metric.
    """

    stage: str
    rule: str
    metric: str
    measured: float
    limit: float
    unit: str
    verdict: str
    message: str
    source: str = ""


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
                 why_missing: str = "", source: str = "") -> Result:
        """Judge the rule on one stage's measurement (pure: no I/O).

        Args:
            stage: the stage the measurement belongs to.
            measured: the metric on that stage; None when not measured.
            reference: the same metric on the previous stage or the baseline (relative rules
                only); None when not measured there.
            why_missing: why ``measured`` or ``reference`` is None, for the message.
            source: "ncu" or "computed" for a metric with a fallback formula (kept in the
                result and named in its message), else "".

        Returns:
            A :class:`Result`; "not measured" when a value is missing, never "pass"; "fail"
            when a value is not finite (an infinite value passes no comparison).

        Raises:
            ThresholdsError: a stated unit does not match the metric's unit, or a relative limit
                overflows (a finite reference times the factor exceeds any float).
        """
        result = self._evaluate(stage, measured, reference, why_missing)
        return _with_source(result, source) if source else result

    def _evaluate(self, stage: str, measured: Band | None, reference: Band | None, why_missing: str) -> Result:
        unit = measured.unit if measured is not None else (reference.unit if reference is not None else "")
        if measured is None or (self.ref is not None and reference is None):
            return Result(stage, self.text, self.metric, measured.value if measured else math.nan, math.nan,
                          unit, "not measured", why_missing or "not measured")
        limit = reference.scaled(self.factor) if reference is not None else Band.point(self.limit_in(unit), unit)
        if reference is not None:
            self._refuse_overflow(stage, reference, limit)
        if self.kind == "timing":
            return self._judge_spread(stage, measured, limit)
        ok = compare_exact(self.op, measured.value, limit.value)
        msg = f"{self.metric} = {_shown(measured.value, limit.value, unit)}, " \
              f"{'within' if ok else 'expected'} {self.op} {fmt_value(limit.value, unit)}{self._of()}"
        return Result(stage, self.text, self.metric, measured.value, limit.value, unit,
                      "pass" if ok else "fail", msg)

    def _refuse_overflow(self, stage: str, reference: Band, limit: Band) -> None:
        """A finite reference times the rule's factor that exceeds any float is the rule's fault,
        not the kernel's: no measurement can be judged against it."""
        ref = (reference.value, reference.lo, reference.hi)
        if all(math.isfinite(x) for x in ref) and not all(math.isfinite(x) for x in (limit.value, limit.lo, limit.hi)):
            raise ThresholdsError(f"{self.where}: rule '{self.text}' on stage {stage}: the limit overflows "
                                  f"({self.factor:g} x {self.ref} {fmt_value(reference.value, reference.unit)} "
                                  "exceeds any float)", f"use a factor that keeps the limit finite, e.g. "
                                  f"'1.10 * {self.ref}'")

    def _of(self) -> str:
        """' (previous)', ' (1.1 x baseline)': what a relative limit was taken from."""
        if self.ref is None:
            return ""
        return f" ({self.factor:g} x {self.ref})" if self.factor != 1 else f" ({self.ref})"

    def _judge_spread(self, stage: str, m: Band, limit: Band) -> Result:
        """A timing rule: the median decides a pass; a failure must lie beyond both spreads."""
        unit = m.unit
        op = OPS[self.op]
        base = f"{self.metric} median {fmt_value(m.value, unit)} vs limit {fmt_value(limit.value, unit)}" \
               f"{self._of()}"
        if not all(math.isfinite(x) for x in (m.value, m.lo, m.hi, limit.value, limit.lo, limit.hi)):
            return Result(stage, self.text, self.metric, m.value, limit.value, unit, "fail",
                          base + ": not finite (an infinite value passes no comparison)")
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


def _shown(value: float, limit: float, unit: str) -> str:
    """``value`` as the report writes it, with more digits where it is within 1 % of ``limit`` but
    not equal (15.996 reads "16.0 sectors/request" and fails ">= 16")."""
    text = fmt_value(value, unit)
    near = value != limit and math.isfinite(value) and abs(value - limit) <= 0.01 * abs(limit)
    return f"{text} ({value:.6g})" if near else text


def _with_source(result: Result, source: str) -> Result:
    """``result`` with its value's source kept and named in the message ('(computed: ...)')."""
    said = {"ncu": "ncu's metric", "computed": "computed from its inputs"}.get(source, source)
    return replace(result, source=source, message=f"{result.message} [value: {said}]")


def compare_exact(op: str, x: float, y: float) -> bool:
    """``x op y`` for deterministic counts, with :data:`EXACT_REL` slack for float rounding only.
    False when either side is not finite: the slack of an infinite value would be infinite too."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
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


def canon_unit(unit: str) -> str:
    """A normalized unit with each part's plural 's' dropped ('Gbytes/s' -> 'Gbyte/s'),
    so that two spellings of one unit compare equal; shared with :mod:`.grammar`."""
    return "/".join(p[:-1] if p.endswith("s") and len(p) > 3 else p for p in unit.split("/"))


def convert_unit(value: float, from_unit: str, to_unit: str) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; None when the two are not the same kind.

    Prefixes and time units convert (``40 us`` -> ``0.04 ms``, ``64 MB`` -> byte); ``%`` only
    matches ``%``.
    """
    a, ua = normalize_unit(value, _UNIT_ALIASES.get(from_unit, from_unit))
    b, ub = normalize_unit(1.0, _UNIT_ALIASES.get(to_unit, to_unit))
    if canon_unit(ua) != canon_unit(ub) or b == 0:
        return None
    return a / b

