"""What ``render`` must not write over: a live run's report. Light on purpose: the CLI asks before
it starts reading a capture (and before pandas or matplotlib are imported)."""

from __future__ import annotations

import json
from pathlib import Path

from profiler_report.errors import InputError


def refuse_live_overwrite(out: Path) -> None:
    """Refuse to render a recorded page over the page of a live run (``out`` holds index.html and
    a provenance.json whose mode is live): that page says every number was measured in the run.

    Raises:
        InputError: ``out`` holds a live run's report.
    """
    out = Path(out)
    prov_path = out / "provenance.json"
    if not (out / "index.html").is_file() or not prov_path.is_file():
        return
    try:
        mode = json.loads(prov_path.read_text(encoding="utf-8")).get("mode")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, RecursionError):
        return  # not a provenance file this tool wrote: nothing to protect
    if mode in ("live", "live run"):
        raise InputError(f"{out} holds a live run's report: rendering there would replace its live page "
                         "by a recorded one", f"pass another --out (default: {out / 'rendered'}), or --force "
                         "to replace it")
