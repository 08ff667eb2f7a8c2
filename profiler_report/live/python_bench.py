"""A Python ladder's peers (``[[peer]]`` functions of stages.toml) timed beside its stages.

``run --peers`` writes bench.json from :func:`bench_at`: cudaMemcpy (device to device, the
ceiling), the stages, the ceiling stage and every peer, each validated as a stage is
(:func:`~profiler_report.live.kernels.validate`: random input, poisoned output, the case's
reference and bound) and event-timed by the same function (:func:`~profiler_report.live.kernels.time_stages`).
A wrong peer is listed with its message and no speed. GPU only.
"""

from __future__ import annotations

import math
from typing import Any

from profiler_report.live.gpu import Timing
from profiler_report.live.kernels import Kernels, Validation, time_stages, validate
from profiler_report.model.base import Case, Size
from profiler_report.model.manifest import Stage

#: bench.json's ``kind`` of each entry by its manifest role.
_KIND = {"copy": "ceiling", "peer": "peer"}


def bench_row(case: Case, t: Timing | None, st: Stage | None, size: Size, dtype: str, memcpy_gbps: float,
              wrong: Validation | None = None) -> dict[str, Any]:
    """One bench.json row: name, kind (stage, ceiling, peer), the timing, % of memcpy, the
    size as ``size`` text and as the case's dimensions; NaN and a WRONG note for a wrong entry."""
    name = st.id if st is not None else "memcpy"
    kind = "ceiling" if st is None else _KIND.get(st.op, "stage")
    nan = math.nan
    med, p10, p90, gbps = (t.median_us, t.p10_us, t.p90_us, t.gbps) if t is not None else (nan, nan, nan, nan)
    return {"name": name, "kind": kind, "dtype": dtype, "size": case.size_text(size), **size,
            "median_us": med, "p10_us": p10, "p90_us": p90, "gbps": gbps,
            "pct_of_memcpy": 100 * gbps / memcpy_gbps if memcpy_gbps and t is not None else nan,
            "timing": "cuda-events" if t is not None else "skipped",
            "note": ("WRONG: " + wrong.message) if wrong is not None else (st.title if st is not None else
                                                                            "cudaMemcpy device to device")}


def bench_at(case: Case, size: Size, dtype: str, repeats: int, stages: list[Stage],
             provenance: dict[str, Any]) -> dict[str, Any]:
    """bench.json's content: memcpy, ``stages``, the ceiling and the peers at one size (GPU)."""
    kernels = Kernels(None, {}, dtype, case)
    peers = list(case.manifest.peers)
    checks = {p.id: validate(kernels, p, size) for p in peers}
    timed = [*stages, case.manifest.ceiling, *(p for p in peers if checks[p.id].correct)]
    timings = {t.name: t for t in time_stages(kernels, timed, size, repeats, warmup=5, buffers=3)}
    memcpy = timings["memcpy"]
    rows = [bench_row(case, memcpy, None, size, dtype, memcpy.gbps)]
    for st in [*stages, case.manifest.ceiling, *peers]:
        bad = checks.get(st.id)
        ok = bad is None or bad.correct
        rows.append(bench_row(case, timings.get(st.id) if ok else None, st, size, dtype, memcpy.gbps,
                              None if ok else bad))
    return {"provenance": provenance, "pct_label": "% of memcpy", "rows": rows}
