"""Number formatting."""

from __future__ import annotations

import math
from typing import Any


def fmt(x: Any, unit: str = "") -> str:
    """Human formatting: NaN -> 'not measured'; big counts with separators; small with 3 digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "not measured"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if unit == "%":
        return f"{x:.1f}%"
    if abs(x) >= 1000 or (x == int(x) and abs(x) >= 10):
        return f"{x:,.0f}"
    if x == int(x):
        return f"{int(x)}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"
