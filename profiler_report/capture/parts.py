"""A live run's ladder kept in several captures: ``profile-parts.json`` in its report folder names,
in ladder order, which capture file holds which stages (written by
:func:`profiler_report.live.reuse.profile` when some stages' captures were reused from the result
cache and others profiled again)."""

from __future__ import annotations

import json
from pathlib import Path

from profiler_report.errors import InputError

#: The file in a report folder.
PARTS = "profile-parts.json"


def read_parts(folder: Path) -> list[tuple[Path, list[str]]] | None:
    """``folder``'s :data:`PARTS` as (capture path, its stage ids) in ladder order; None when the
    ladder is one capture (profile.ncu-rep alone).

    Raises:
        InputError: the file is present but not of the shape a live run writes.
    """
    path = folder / PARTS
    if not path.is_file():
        return None
    try:
        parts = json.loads(path.read_text())["parts"]
        return [(folder / str(p["file"]), [str(s) for s in p["stages"]]) for p in parts]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path} is not a list of capture files and their stages ({type(exc).__name__})",
                         "regenerate the report with `profiler-report run`") from exc
