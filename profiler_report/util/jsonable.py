"""Tables as JSON that is valid JSON: no ``NaN`` or ``Infinity`` tokens (null means not measured)."""

from __future__ import annotations

import dataclasses
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


#: A row field's annotation (a string: ``from __future__ import annotations``) -> the JSON types it takes.
_JSON_TYPES: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}


def check_record(row_type: type | None, row: dict[str, Any]) -> None:
    """ValueError unless ``row`` (a record read back from JSON) has every required field of dataclass
    ``row_type``, no other, and values of the annotated types; nothing is checked for None."""
    if row_type is None:
        return
    fields = {f.name: f for f in dataclasses.fields(row_type)}
    dims: tuple[str, ...] = ()
    if "dims" in fields:  # a bench row (live/bench.py BenchRow): dims flattened, pct under its key
        dims, pct = tuple(getattr(row_type, "DIMS", ())), fields.pop("pct")
        del fields["dims"]
        fields[getattr(row_type, "PCT_KEY", "pct")] = pct
    extra = sorted(set(row) - set(fields) - set(dims))
    missing = [n for n, f in fields.items() if n not in row and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING] + [d for d in dims if d not in row]
    if extra or missing:
        raise ValueError(f"a row with unknown fields {extra} or without {missing}")
    for name, value in row.items():  # bool is an int: an int field takes no bool
        if name in dims:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"row dimension {name} is {value!r:.40}, not an integer")
            continue
        kinds = _JSON_TYPES.get(str(fields[name].type))
        if kinds and (not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)):
            raise ValueError(f"row field {name} is {value!r:.40}, not {fields[name].type}")
