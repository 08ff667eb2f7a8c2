"""Notes for the top of the report."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from profiler_report.analysis.sanitizer import sanitizer_text
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
    """Provenance for the report: the live run's record, else what the capture itself holds
    (:func:`foreign_provenance`)."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    prov: dict[str, Any] = dict(side.provenance or {}) if side.provenance else foreign_provenance(capture)
    dev = capture.device
    prov.setdefault("gpu", dev.get("gpu", "unknown (not in the capture)"))
    prov.setdefault("sm_count", dev.get("sm_count", "unknown"))
    if "cc_major" in dev:
        prov.setdefault("compute_capability", f"{dev['cc_major']}.{dev.get('cc_minor', 0)}")
    if capture.report_version:
        # ncu_report reports its own version, not that of the ncu that wrote the capture.
        prov.setdefault("ncu_version", f"unknown (not in the capture; read with ncu_report {capture.report_version})")
    prov.setdefault("clock_control", clock_control_from_log(Path(capture.path).parent / "ncu.log"))
    prov.setdefault("sanitizer", sanitizer_text(side.sanitizer))  # a capture without results: "not run"
    prov["capture"] = " + ".join(str(p) for p in capture.parts) if capture.parts else str(capture.path)
    prov["rendered_utc"] = now
    if live:
        prov["mode"] = "live run"
    else:
        prov["mode"] = "recorded capture"
        recorded = side.provenance.get("date_utc", "an unknown date") if side.provenance else "an unknown date"
        prov["mode_note"] = (f"Rendered on {now} from {prov['capture']}, recorded on {recorded}. "
                             + ("Event timings and correctness checks are the ones recorded with it."
                                if side.timings else "No event timings were recorded with this capture."))
    return prov


#: What a capture made elsewhere cannot say (no provenance.json beside it), for the one line
#: "not in the capture" of the environment block.
NOT_IN_A_CAPTURE = ("driver", "CUDA runtime", "Nsight Compute version", "--set", "cache control",
                    "the problem size", "event timings", "date", "commit")


def foreign_provenance(capture: Capture) -> dict[str, Any]:
    """What a capture without provenance.json holds: the device's attributes
    (``device__attribute_*``: SM clock, memory clock, L2 size), its launches, kernels, grids and
    blocks, the dtype of the kernels' first template argument, the ncu_report that read it; and
    ``not_in_capture``, one line for what it cannot say (clock control too, unless an ncu.log
    beside it does)."""
    from profiler_report.analysis.compare import run_identity

    dev, prov = capture.device, {}
    if dev.get("sm_clock_khz"):
        prov["sm_clock"] = f"{float(dev['sm_clock_khz']) / 1e6:.2f} GHz (device attribute; the clock while " \
                           "profiling is not recorded)"
    if dev.get("memory_clock_khz"):
        prov["memory_clock"] = f"{float(dev['memory_clock_khz']) / 1e6:.2f} GHz (device attribute)"
    if dev.get("l2_bytes"):
        prov["l2_size"] = f"{float(dev['l2_bytes']) / 2**20:.0f} MiB"
    launches = capture.launches()
    kernels = list(dict.fromkeys(launches["kernel"]))
    prov["launches"] = f"{len(launches)} launches of {len(kernels)} kernels: {', '.join(kernels[:8])}" \
        + (f" and {len(kernels) - 8} more" if len(kernels) > 8 else "")
    shapes = list(dict.fromkeys(f"grid {g}, block {b}" for g, b in zip(launches["grid"], launches["block"],
                                                                      strict=True)))
    prov["launch_shapes"] = "; ".join(shapes[:4]) + (f"; and {len(shapes) - 4} more" if len(shapes) > 4 else "")
    dtype = run_identity(capture, {}).get("dtype")
    if dtype:
        prov["dtype"] = f"{dtype} (the kernels' first template argument)"
    if capture.report_version:
        prov["read_with"] = f"ncu_report {capture.report_version}"
    missing = list(NOT_IN_A_CAPTURE)
    if not clock_control_from_log(Path(capture.path).parent / "ncu.log").startswith("none"):
        missing.insert(4, "clock control")
    prov["not_in_capture"] = ", ".join(missing)
    return prov
