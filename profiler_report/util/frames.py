"""Rows of a pandas table as the code reads them: :func:`tuples` is ``DataFrame.itertuples()``
typed ``Any`` per row, because a row's fields are the table's columns, which a type checker
cannot know (pandas-stubs types each field as any scalar at all).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def tuples(frame: pd.DataFrame) -> Iterator[Any]:
    """``frame.itertuples()``: one namedtuple per row (``Index`` first, then the columns)."""
    return iter(frame.itertuples())
