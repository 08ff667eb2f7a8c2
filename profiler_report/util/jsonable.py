"""Tables as JSON that is valid JSON: no ``NaN`` or ``Infinity`` tokens (null means not measured)."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd


def _plain(value: Any) -> Any:
    """A cell as JSON holds it: NaN and infinities -> None; numpy scalars -> Python numbers."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One dict per row, every non-finite number None."""
    return [{str(k): _plain(v) for k, v in r.items()} for r in frame.to_dict("records")]


def dumps(data: Any) -> str:
    """``json.dumps`` that refuses a NaN or infinity (``allow_nan=False``) rather than writing
    ``NaN``/``Infinity``, which no strict JSON reader accepts; pass data made by :func:`records`.

    Raises:
        ValueError: ``data`` holds a non-finite float.
    """
    return json.dumps(data, indent=2, default=str, allow_nan=False)
