"""The peers table from bench.json, and where the benchmark rows ran."""

from __future__ import annotations

from typing import Any

from profiler_report.analysis.ladder import SPEED_FIELDS
from profiler_report.analysis.placement import mixed_gpus
from profiler_report.util.fmt import fmt


def size_key(r: dict[str, Any]) -> str:
    """A bench.json / sweep.json row's size as its case writes it: the row's ``size`` text
    ('n=268435456'), else '<rows>x<cols>' (the transpose's rows)."""
    return str(r["size"]) if r.get("size") else f"{r.get('rows')}x{r.get('cols')}"


def pct_of_reference(r: dict[str, Any]) -> Any:
    """A row's GB/s as a % of its run's reference: ``pct_of_ceiling`` (the case's ceiling kernel)
    where the case writes it, else ``pct_of_memcpy``."""
    return r["pct_of_ceiling"] if "pct_of_ceiling" in r else r.get("pct_of_memcpy")


def pct_label(bench: list[dict[str, Any]]) -> str:
    """The header of :func:`pct_of_reference`'s column."""
    return "% of ceiling kernel" if any("pct_of_ceiling" in r for r in bench) else "% of memcpy"


def bench_rows(bench: list[dict[str, Any]], unit: str = "GB/s") -> list[dict[str, str]]:
    """Rows of the peers table; ``gbps`` is each row's figure in ``unit`` (bench.json's ``gbps``,
    or ``tflops`` for a case judged in TFLOP/s); ``vs_best_peer`` is that over the fastest peer's
    at the same size and dtype ("" where no peer ran there); ``pct`` is :func:`pct_of_reference`."""
    key_of = SPEED_FIELDS.get(unit, SPEED_FIELDS["GB/s"])[1]
    best: dict[tuple[str, Any], float] = {}
    for r in bench:
        g = r.get(key_of)
        if r["kind"] == "peer" and g is not None and g == g and not r.get("note", "").startswith("WRONG"):
            key = (size_key(r), r["dtype"])
            best[key] = max(best.get(key, 0.0), float(g))
    out = []
    for r in bench:
        g, ref = r.get(key_of), best.get((size_key(r), r["dtype"]))
        ratio = f"{g / ref:.3f}x" if ref and g is not None and g == g else ""
        note = ("chosen (the profiled configuration); " if r.get("chosen") else "") + r.get("note", "")
        out.append({"name": r["name"], "kind": r["kind"], "gbps": fmt(g, unit),
                    "pct": fmt(pct_of_reference(r), "%"), "vs_best_peer": ratio,
                    "median_us": fmt(r.get("median_us"), "us"),
                    "spread": f"{fmt(r.get('p10_us'), 'us')} - {fmt(r.get('p90_us'), 'us')}",
                    "timing": r.get("timing", ""), "note": note.rstrip("; ")})
    return out


def where_notes(rows: list[dict[str, Any]]) -> list[str]:
    """The report's notes on where bench/sweep rows ran (rows of `bench` carry host, gpu_index,
    gpu_uuid, gpu_name, gpu_driver: live/fanout.py): one line naming the GPUs when the rows ran on
    more than one, and the warning when those differ in model or driver; [] for rows that say
    nothing of where they ran (files from before, or one GPU)."""
    placed = [r for r in rows if r.get("host")]
    gpus = sorted({(r["host"], str(r.get("gpu_index", "")), str(r.get("gpu_uuid", ""))) for r in placed})
    out = []
    if len(gpus) > 1:
        names = ", ".join(f"{h} GPU {i or '?'}" + (f" ({u})" if u else "") for h, i, u in gpus)
        out.append(f"the benchmark rows ran on {len(gpus)} GPUs: {names}")
    warning = mixed_gpus(placed)
    return out + ([f"warning: {warning}"] if warning else [])
