"""Names and units as Nsight Compute writes them, made comparable: metric values to base units
(bytes, seconds, counts), kernel names short, templated or demangled, rule texts cleaned, and
which side (load or store) a shared-memory SASS instruction is.
"""

from __future__ import annotations

import re

_PREFIX = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


_BASES = ("byte", "cycle", "hz", "inst", "warp", "sector", "request", "wavefront",
          "thread", "block", "register", "transaction", "bit")


_UNIT_PART = re.compile(rf"^(?P<p>[pnumKMGT]?)(?P<b>{'|'.join(_BASES)})$")


#: Time units in nanoseconds, the one internal time unit.
#: ``µs`` (micro sign) and ``μs`` (Greek mu) are the spellings spreadsheets and people use for ``us``.
_TIME_NS = {"ps": 1e-3, "psecond": 1e-3, "ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3,
            "\u00b5s": 1e3, "\u03bcs": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}


#: Unit words ncu writes that carry no scale and pass through unchanged (seen in the raw and
#: details pages of ncu 2025.3.1: ``%``, ``branches``, ``sectors``, ``pass``, ``cluster``, ``SM``, ``sample``).
_PLAIN_UNITS = {"%", "branches", "sectors", "pass", "cluster", "SM", "sample"}


def _part(part: str) -> tuple[float, str] | None:
    """(scale to base, base) of one side of a unit; None when not understood."""
    if part in _TIME_NS:
        return _TIME_NS[part], "ns"
    m = _UNIT_PART.match(part)
    if m:
        return _PREFIX[m.group("p")], m.group("b")
    return None


def known_unit(unit: str) -> bool:
    """Whether :func:`normalize_unit` understands ``unit``: empty (a count), or each side of
    ``num/den`` a time, an SI-prefixed base (``Mbyte``, ``Ghz``, ``sector``) or a plain ncu unit
    word (``%``, ``branches``, ...). An unknown unit could hide any scale, so the CSV readers
    refuse it."""
    unit = (unit or "").strip()
    if not unit:
        return True
    parts = unit.split("/")
    return len(parts) <= 2 and all(p in _PLAIN_UNITS or _part(p) is not None for p in parts)


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


_SHORT = re.compile(r"^(?:void\s+)?([A-Za-z_\x00][\w:\x00]*)")


_ANON = "(anonymous namespace)"


def short_kernel_name(name: str) -> str:
    """``void ns::transpose_naive<float>(const float *, ...)`` -> ``ns::transpose_naive``;
    ``void (anonymous namespace)::k<T<(int)3>>(P)`` -> ``(anonymous namespace)::k``."""
    text = name.strip()
    m = _SHORT.match(text.replace(_ANON, "\x00"))
    return m.group(1).replace("\x00", _ANON) if m else text


def template_name(name: str) -> str:
    """``void transpose_tile<float, (int)32>(const T1 *, T1 *)`` -> ``transpose_tile<float, (int)32>``:
    the display name without return type and parameter list, template arguments kept."""
    text = name.strip().replace(_ANON, "\x00")
    text = text[5:] if text.startswith("void ") else text
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            text = text[:i]
            break
    return text.strip().replace("\x00", _ANON)


def is_mangled(name: str) -> bool:
    """Whether a kernel name is an Itanium-ABI mangled name (``_Z15transpose_naiveIfEvPKT_PS0_ii``),
    as ncu writes under ``--print-kernel-base mangled``."""
    return name.strip().startswith("_Z")


_LINK = re.compile(r"@(?:section|url):([^:@]+):?([^@]*)@")


def clean_rule_text(text: str) -> str:
    """Drop ncu's link markup: ``@section:Id:Name@`` -> ``Name``, ``@url:Name:https://..@`` -> ``Name``."""
    return _LINK.sub(lambda m: m.group(2).split(":http")[0] if m.group(2) else m.group(1), text)


def shared_side(sass: str) -> str:
    """'load' for LDS/LDSM, 'store' for STS and LDGSTS (it writes shared memory), else ''.

    A leading predicate (``@!P0``) is skipped: ``@!P0 STS [R7], R8`` -> 'store'.
    """
    ops = [t for t in sass.split() if not t.startswith("@")]
    op = ops[0].upper() if ops else ""
    if op.startswith("LDGSTS") or op.startswith("STS"):
        return "store"
    if op.startswith("LDS"):
        return "load"
    return ""
