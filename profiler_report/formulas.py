"""Formulas over raw Nsight Compute metric values: :class:`Expr` and its forms (a metric, a ratio,
a sum, a difference, a scaled value, the first present of several, a value only when another is
non-zero). Each computes a value (base units; a missing input gives NaN, never 0), writes its own
text and names the metrics it reads, so a column of :mod:`profiler_report.metrics` is declared
once. Standard library only: the capture readers use it too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

Values = Mapping[str, float]



class Expr:
    """A formula over raw ncu metric values (base units). Missing inputs give NaN, never 0."""

    def __call__(self, v: Values) -> float:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def needs(self) -> tuple[str, ...]:
        """The raw ncu metrics the formula reads, in the order it names them."""
        raise NotImplementedError


@dataclass(frozen=True)
class M(Expr):
    """One raw ncu metric."""

    name: str

    def __call__(self, v: Values) -> float:
        return float(v.get(self.name, math.nan))

    def text(self) -> str:
        return self.name

    def needs(self) -> tuple[str, ...]:
        return (self.name,)


@dataclass(frozen=True)
class Ratio(Expr):
    """``num / den``; NaN when either is missing or ``den`` is 0."""

    num: Expr
    den: Expr

    def __call__(self, v: Values) -> float:
        return ratio(self.num(v), self.den(v))

    def text(self) -> str:
        return f"{_paren(self.num)} / {_paren(self.den)}"

    def needs(self) -> tuple[str, ...]:
        return (*self.num.needs(), *self.den.needs())


@dataclass(frozen=True)
class Sum(Expr):
    """``a + b``; with ``optional_b``, a missing ``b`` counts as 0 (dynamic shared memory)."""

    a: Expr
    b: Expr
    optional_b: bool = False

    def __call__(self, v: Values) -> float:
        b = self.b(v)
        return self.a(v) + (0.0 if self.optional_b and math.isnan(b) else b)

    def text(self) -> str:
        return f"{self.a.text()} + {self.b.text()}"

    def needs(self) -> tuple[str, ...]:
        return (*self.a.needs(), *self.b.needs())


@dataclass(frozen=True)
class Product(Expr):
    """``a * b`` (a per-cycle rate times the cycles elapsed: a count)."""

    a: Expr
    b: Expr

    def __call__(self, v: Values) -> float:
        return self.a(v) * self.b(v)

    def text(self) -> str:
        return f"{_paren(self.a)} * {_paren(self.b)}"

    def needs(self) -> tuple[str, ...]:
        return (*self.a.needs(), *self.b.needs())


@dataclass(frozen=True)
class Diff(Expr):
    """``a - b``."""

    a: Expr
    b: Expr

    def __call__(self, v: Values) -> float:
        return self.a(v) - self.b(v)

    def text(self) -> str:
        return f"{self.a.text()} - {self.b.text()}"

    def needs(self) -> tuple[str, ...]:
        return (*self.a.needs(), *self.b.needs())


@dataclass(frozen=True)
class Scaled(Expr):
    """``a * factor``, written as ``text`` (e.g. ``/ 32 * 100``)."""

    a: Expr
    factor: float
    written: str

    def __call__(self, v: Values) -> float:
        return self.a(v) * self.factor

    def text(self) -> str:
        return f"{self.a.text()} {self.written}"

    def needs(self) -> tuple[str, ...]:
        return self.a.needs()


@dataclass(frozen=True)
class FirstOf(Expr):
    """``primary`` when the capture holds it, else ``fallback`` (labelled "computed")."""

    primary: Expr
    fallback: Expr

    def __call__(self, v: Values) -> float:
        x = self.primary(v)
        return self.fallback(v) if math.isnan(x) else x

    def source_of(self, v: Values) -> str:
        """"ncu" when the primary metric was read, "computed" when the fallback gave the value,
        "not collected" when neither could be computed."""
        if not math.isnan(self.primary(v)):
            return "ncu"
        return "not collected" if math.isnan(self.fallback(v)) else "computed"

    def text(self) -> str:
        return f"{self.primary.text()}; if absent, computed as {self.fallback.text()}"

    def needs(self) -> tuple[str, ...]:
        return (*self.primary.needs(), *self.fallback.needs())


@dataclass(frozen=True)
class WhenNonZero(Expr):
    """``a``, or NaN when ``guard`` reads 0: ncu gives a per-instruction ratio as 0 when no such
    instruction ran (the global load efficiency of a kernel whose loads are all cp.async, LDGSTS).
    A missing ``guard`` leaves ``a`` as it is (captures that predate the guard metric)."""

    a: Expr
    guard: Expr

    def __call__(self, v: Values) -> float:
        return math.nan if self.guard(v) == 0 else self.a(v)

    def text(self) -> str:
        return f"{self.a.text()}, when {self.guard.text()} > 0"

    def needs(self) -> tuple[str, ...]:
        return (*self.a.needs(), *self.guard.needs())


def _paren(e: Expr) -> str:
    return f"({e.text()})" if isinstance(e, Sum | Diff) else e.text()


def ratio(a: float, b: float) -> float:
    """``a / b``; NaN when either is NaN or ``b`` is 0."""
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return a / b
