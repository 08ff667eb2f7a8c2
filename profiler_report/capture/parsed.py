"""Captures already read, kept in the result cache (:mod:`profiler_report.util.result_cache`):
reading a full-set ``.ncu-rep`` with ncu_report takes seconds (child processes, every metric of
every launch), loading the tables it gave takes a fraction of that.

Keyed by the file's SHA-256, the reader (:func:`~profiler_report.capture.ncu_module.chosen`) and
the code of this package and of the metric registry (a change in how a capture is read is a
miss). The stored :class:`~profiler_report.capture.model.Capture` is a pickle the tool wrote
itself into the user's own cache folder; one that does not load is a miss, never an error.
``$PROFILER_REPORT_NO_READ_CACHE`` (any value) turns it off.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from profiler_report.util.result_cache import ResultCache, file_sha256, files_hash

if TYPE_CHECKING:  # the model imports pandas: start_read asks has() before it is loaded
    from profiler_report.capture.model import Capture

KIND = "read"
_HASHES: dict[tuple[str, int, int], str] = {}


def _code_hash() -> str:
    here = Path(__file__).resolve().parent
    return files_hash([*here.glob("*.py"), here.parent / "metrics.py"])


def _key(path: Path) -> dict[str, str] | None:
    if os.environ.get("PROFILER_REPORT_NO_READ_CACHE"):
        return None
    from profiler_report.capture import ncu_module

    try:
        st = path.stat()
        memo = (str(path.resolve()), st.st_size, st.st_mtime_ns)
        if memo not in _HASHES:
            _HASHES[memo] = file_sha256(path)
    except OSError:
        return None
    reader = ncu_module.chosen()
    return {"sha256": _HASHES[memo], "reader": reader.describe() if reader else "none", "code": _code_hash()}


def load(path: Path) -> Capture | None:
    """The capture read from a file with ``path``'s content before; None when none is kept."""
    key = _key(path)
    if key is None:
        return None
    store = ResultCache()
    entry = store.get(KIND, key)
    if entry is None:
        return None
    from profiler_report.capture.model import Capture

    try:
        cap = pickle.loads(entry.path("capture.pickle").read_bytes())
    except Exception:  # unpicklable after a library upgrade: read the file again
        return None
    return replace(cap, path=path) if isinstance(cap, Capture) else None


def has(path: Path) -> bool:
    key = _key(path)
    return key is not None and ResultCache().get(KIND, key) is not None


def store(path: Path, capture: Capture) -> None:
    """Keep ``capture`` (read from ``path``) for the next read; a cache that cannot be written is skipped."""
    key = _key(path)
    if key is None:
        return
    try:
        ResultCache().put(KIND, key, {"file": path.name}, {"capture.pickle": pickle.dumps(capture, protocol=5)})
    except (OSError, pickle.PicklingError):
        pass
