"""Notes for the top of the report."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from profiler_report.capture.model import Capture
from profiler_report.capture.sidecars import Sidecars


def page_notes(prov: dict[str, Any], capture: Capture | None = None) -> list[str]:
    """Notes for the top of the report: time sources, clock control, odd captures."""
    notes = [time_source_note(prov, capture)]
    if capture is not None:
        notes.extend(capture.notes)
        if capture.kind == "csv-details":
            notes.append("Read from a details-page CSV export: its values are rounded to 3-4 significant digits "
                         "and most analysis metrics are not on that page; export `--page raw` for the full analysis.")
    return [n for n in notes if n]


def time_source_note(prov: dict[str, Any], capture: Capture | None = None) -> str:
    """Which clocks the profiled durations ran at, from provenance's ``clock_control``."""
    cc = str(prov.get("clock_control", "") or "")
    if cc == "base":
        return ("Clocks were locked to base by ncu (--clock-control base) for the profiled launches: "
                "'duration (ncu)' figures are at base clock, while event-timed figures ran at the GPU's own "
                "clocks. Compare each only with figures of the same source.")
    if cc.startswith("none"):
        return ("ncu left the GPU clocks unlocked (--clock-control none): 'duration (ncu)' figures are single "
                "launches after ncu flushed the caches, at whatever clock the GPU ran; event-timed figures are "
                "medians of warm launches. They are different figures.")
    if cc.startswith("n/a"):
        return "No profiler ran: every time in this report is event-timed (CUDA events, median of the launches)."
    clock = measured_sm_clock(capture) if capture is not None else ""
    return ("Clock control of the profiled launches: unknown (not in the capture); 'duration (ncu)' figures are "
            "ncu's profiled launches." + (f" {clock}" if clock else ""))


#: What ncu 2025.3.1 prints when it profiles with --clock-control none.
UNLOCKED_CLOCKS = "Running with unmodified GPU clocks"


def clock_control_from_log(log: Path) -> str:
    """Clock control of a capture from the ncu.log beside it: 'none (...)' when ncu said it left
    the clocks alone, else 'unknown (not in the capture)'. ncu prints nothing when it locks them."""
    try:
        text = log.read_text(errors="replace") if log.is_file() else ""
    except OSError:
        text = ""
    if UNLOCKED_CLOCKS in text:
        return f"none (ncu.log: '{UNLOCKED_CLOCKS}')"
    return "unknown (not in the capture)"


def measured_sm_clock(capture: Capture) -> str:
    """'SM clock measured during the profiled launches: 1.96-1.98 GHz (...)', or '' when absent."""
    m = capture.metrics
    vals = m.loc[m["metric"] == "sm__cycles_elapsed.avg.per_second", "value"].dropna()
    if vals.empty:
        return ""
    lo, hi = vals.min() / 1e9, vals.max() / 1e9
    span = f"{lo:.2f} GHz" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f} GHz"
    return f"SM clock measured during the profiled launches: {span} (sm__cycles_elapsed.avg.per_second)."


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
