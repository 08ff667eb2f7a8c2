"""Glue between the stages: a capture (plus its sidecar files) -> analysis -> report folder.

A live run leaves these files beside ``profile.ncu-rep``; ``render`` picks them up when present:
``timings.json`` (event timings), ``validation.json`` (correctness), ``provenance.json``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .analyze import Analysis, analyze
from .annotate import annotate_stages, clock_control_from_log, page_notes
from .config import Manifest, load_manifest
from .driver import StepTimer
from .errors import InputError
from .extract import Capture, read_capture
from .readahead import PendingRead
from .render import (
    ChartPool,
    Page,
    build_page,
    capture_chart_jobs,
    fill_charts,
    sidecar_chart_jobs,
    write_outputs,
)


@dataclass
class Sidecars:
    """Optional files recorded beside a capture by a live run."""

    timings: list[dict[str, Any]] | None = None
    validation: list[dict[str, Any]] | None = None
    provenance: dict[str, Any] | None = None
    bench: list[dict[str, Any]] | None = None  # bench.json rows: stages and peers at the run's size
    sweep: list[dict[str, Any]] | None = None  # sweep.json rows: sizes and dtypes


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "delete or regenerate the file") from exc


#: Keys each entry of a sidecar list must have, with the type of their value.
_ENTRY_KEYS: dict[str, dict[str, tuple[type, ...]]] = {
    "timings.json": {"name": (str,), "median_us": (int, float), "p10_us": (int, float), "p90_us": (int, float),
                     "gbps": (int, float)},
    "validation.json": {"stage": (str,), "correct": (bool,), "rows": (int,), "cols": (int,), "dtype": (str,)},
    "bench.json": {"name": (str,), "kind": (str,), "rows": (int,), "cols": (int,), "dtype": (str,)},
    "sweep.json": {"name": (str,), "kind": (str,), "rows": (int,), "cols": (int,), "dtype": (str,)},
}


def _entries(path: Path, data: Any, key: str | None) -> list[dict[str, Any]]:
    """The list of entries of a sidecar file, checked entry by entry.

    Raises:
        InputError: the file does not have the shape a live run writes.
    """
    items = data.get(key) if key and isinstance(data, dict) else (data if key is None else None)
    if not isinstance(items, list):
        raise InputError(f"{path} is not a {path.name} written by profiler-report (no list"
                         f"{' under ' + repr(key) if key else ''})", "delete or regenerate the file")
    want = _ENTRY_KEYS[path.name]
    for i, item in enumerate(items):
        bad = [k for k, types in want.items() if not isinstance(item, dict) or not _typed(item.get(k), types)]
        if not bad:
            bad = _bad_optional(path.name, item)
        if bad:
            raise InputError(f"{path}: entry {i} lacks or mistypes {', '.join(bad)}", "delete or regenerate the file")
    return items


_NUMBER = (int, float)
#: Keys a bench.json / sweep.json entry may hold, with their types; a timed value may also be
#: null or NaN (a skipped or wrong entry), never infinite or negative.
_BENCH_OPTIONAL: dict[str, tuple[type, ...]] = {
    "gbps": _NUMBER, "pct_of_memcpy": _NUMBER, "median_us": _NUMBER, "p10_us": _NUMBER, "p90_us": _NUMBER,
    "note": (str,), "timing": (str,), "resident": (str,), "tile": (str,), "threads": (int,), "per_thread": (int,),
    "chosen": (bool,),
}
#: Keys a block-shape sweep entry (kind "shape") must hold: the report's verdicts rest on them.
_SHAPE_REQUIRED = ("gbps", "pct_of_memcpy", "median_us", "p10_us", "p90_us")


def _typed(value: Any, types: tuple[type, ...]) -> bool:
    """``value`` is of ``types`` (a bool only where bool is named) and, if a number, not infinite
    or negative (NaN is allowed: it marks an entry that was not timed)."""
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        return False
    return not (isinstance(value, float) and (math.isinf(value) or value < 0)) and not (
        isinstance(value, int) and not isinstance(value, bool) and value < 0)


def _bad_optional(name: str, item: dict[str, Any]) -> list[str]:
    """Optional keys of a bench.json / sweep.json entry that are present with the wrong type."""
    if name not in ("bench.json", "sweep.json"):
        return []
    bad = [k for k, types in _BENCH_OPTIONAL.items()
           if k in item and item[k] is not None and not _typed(item[k], types)]
    if item.get("kind") == "shape":
        bad += [k for k in _SHAPE_REQUIRED if k not in item and k not in bad]
    return bad


def read_sidecars(folder: Path) -> Sidecars:
    """timings.json, validation.json, provenance.json, bench.json, sweep.json from ``folder``, where present.

    Raises:
        InputError: a file is present but unreadable or not of the shape a live run writes.
    """
    side = Sidecars()
    files = {name: folder / name for name in ("timings.json", "validation.json", "provenance.json",
                                              "bench.json", "sweep.json")}
    if files["timings.json"].is_file():
        side.timings = _entries(files["timings.json"], _load_json(files["timings.json"]), "timings")
    if files["validation.json"].is_file():
        side.validation = _entries(files["validation.json"], _load_json(files["validation.json"]), None)
    if files["provenance.json"].is_file():
        prov = _load_json(files["provenance.json"])
        if not isinstance(prov, dict):
            raise InputError(f"{files['provenance.json']} is not an object", "delete or regenerate the file")
        side.provenance = prov
    if files["bench.json"].is_file():
        side.bench = _entries(files["bench.json"], _load_json(files["bench.json"]), "rows")
    if files["sweep.json"].is_file():
        side.sweep = _entries(files["sweep.json"], _load_json(files["sweep.json"]), "rows")
    return side


def own_manifest_for(capture: Capture, manifest: Manifest) -> Manifest | None:
    """The manifest when the capture was made by the project's own stage launcher (pr_ ranges)."""
    from .run import NVTX_PREFIX

    ranges = capture.launches()["nvtx_range"].fillna("")
    return manifest if len(ranges) and ranges.str.contains(NVTX_PREFIX, regex=False).all() else None


def capture_provenance(capture: Capture, side: Sidecars, live: bool) -> dict[str, Any]:
    """Provenance for the report: the live run's record, else what the capture itself holds."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    prov: dict[str, Any] = dict(side.provenance or {})
    dev = capture.device
    prov.setdefault("gpu", dev.get("gpu", "unknown (not in the capture)"))
    prov.setdefault("sm_count", dev.get("sm_count", "unknown"))
    if "cc_major" in dev:
        prov.setdefault("compute_capability", f"{dev['cc_major']}.{dev.get('cc_minor', 0)}")
    if capture.report_version:
        # ncu_report reports its own version, not that of the ncu that wrote the capture.
        prov.setdefault("ncu_version", f"unknown (not in the capture; read with ncu_report {capture.report_version})")
    prov.setdefault("clock_control", clock_control_from_log(Path(capture.path).parent / "ncu.log"))
    prov["capture"] = str(capture.path)
    prov["rendered_utc"] = now
    if live:
        prov["mode"] = "live run"
    else:
        prov["mode"] = "recorded capture"
        recorded = side.provenance.get("date_utc", "an unknown date") if side.provenance else "an unknown date"
        prov["mode_note"] = (f"Rendered on {now} from {capture.path}, recorded on {recorded}. "
                             + ("Event timings and correctness checks are the ones recorded with it."
                                if side.timings else "No event timings were recorded with this capture."))
    return prov


def render_capture(capture_path: Path, out: Path, *, labels: list[tuple[str, str]] | None = None,
                   live: bool = False, manifest: Manifest | None = None,
                   sidecars: Sidecars | None = None, capture_label: str | None = None,
                   page_hook: Callable[[Page, Analysis], None] | None = None,
                   pending: PendingRead | None = None, timer: StepTimer | None = None,
                   chart_workers: int = 1) -> tuple[Analysis, list[Path]]:
    """Read, analyze and render one capture into ``out`` (index.html, summary.csv, summary.json).

    ``capture_label`` is the path the report names for the capture (a live run renders inside
    its ``.partial`` folder, then renames it). ``page_hook(page, analysis)`` may add to the page
    before it is written (``render --baseline`` adds its comparison). ``pending``: the read of
    ``capture_path`` already started (:func:`profiler_report.readahead.start_read`).
    ``chart_workers`` > 1 draws the charts in that many forked processes (see
    :class:`~profiler_report.render.ChartPool`), while the page is built here. ``timer`` records
    the steps read, analyze, page and charts (the wait for the charts once the page is built), write.

    Raises:
        InputError: a sidecar file is corrupt (checked first); a ``--stage`` pattern is bad or
            matches nothing.
        ReportUnreadableError: the capture cannot be read.
    """
    timer = timer or StepTimer(progress=False)
    with ChartPool(chart_workers) as pool:  # forked now: the workers start while ncu_report reads
        side = sidecars if sidecars is not None else read_sidecars(Path(capture_path).parent)
        early = pool.draw(sidecar_chart_jobs(side.bench, side.sweep))  # need no capture: drawn during the read
        with timer.step("read"):
            capture = read_capture(capture_path, pending=pending)
        with timer.step("analyze"):
            manifest = manifest or load_manifest()
            own = None if labels else own_manifest_for(capture, manifest)
            analysis = analyze(capture, own, labels, side.timings)
        late = pool.draw(capture_chart_jobs(analysis, side.timings))
        with timer.step("page"):
            page = _page(capture, analysis, side, own, live, capture_label, page_hook)
        with timer.step("charts"):
            fill_charts(page, {**early(), **late()})
    with timer.step("write"):
        files = write_outputs(out, page, analysis)
    return analysis, files


def _page(capture: Capture, analysis: Analysis, side: Sidecars, own: Manifest | None, live: bool,
          capture_label: str | None, page_hook: Callable[[Page, Analysis], None] | None) -> Page:
    """The page of :func:`render_capture`, without its charts."""
    prov = capture_provenance(capture, side, live)
    if capture_label:
        prov["capture"] = capture_label
    page = build_page(analysis, prov, own, side.timings, side.validation, charts=False, bench=side.bench,
                      sweep=side.sweep)
    page.notes.extend(page_notes(prov, capture))
    annotate_stages(page, analysis, capture, own, side.validation)
    if page_hook is not None:
        page_hook(page, analysis)
    return page


def render_timings_only(folder: Path, manifest: Manifest | None = None) -> tuple[Analysis, list[Path]]:
    """The report of a run without counters (``run --no-counters``), from ``folder``'s sidecar files.

    See :func:`profiler_report.degraded.render_timings_only`.

    Raises:
        InputError: the folder holds neither validation.json nor timings.json, or one is corrupt.
    """
    from .degraded import render_timings_only as render

    return render(folder, manifest)
