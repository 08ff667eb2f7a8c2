"""Compare two `profiler-report sweep` folders (or their sweep.json) of the same points, e.g.
in-process against `--cluster local`: the same points, statuses and rows, and the fan-out's
overhead per point.

    python scripts/compare_sweep.py inprocess/ cluster/ [--tolerance 0.10]

Rows are matched by (capture, stage). Launch configuration (kernel, grid, block) and columns
counted in instructions (unit "inst" in sweep.json's ``columns``: instructions do not change
between two profiles of one kernel at one size) must be equal; every other numeric column must
lie within ``--tolerance`` (relative; default 10 %) of the other file's, as two ncu runs of the same
launch differ by their run-to-run spread (durations, throughputs, the raw bank-conflict counters)
and then its largest relative difference is printed. The overhead of a point is its client-seen
wall time (sweep.points[].wall_s) minus its time on the worker (seconds).

Exit status: 0 all match, 1 a difference (listed), 2 a file unreadable or not a sweep.json.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

EXACT = ("kernel", "grid", "block", "role")


def load(path: Path) -> dict[str, Any]:
    path = path / "sweep.json" if path.is_dir() else path
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"error: cannot read {path}: {exc} (fix: pass a folder written by profiler-report sweep)")
    if data.get("schema") != "profiler-report.sweep/1":
        sys.exit(f"error: {path} is not a profiler-report sweep.json (fix: pass a folder written by "
                 "profiler-report sweep)")
    return data


def differences(a: dict[str, Any], b: dict[str, Any], tolerance: float) -> tuple[list[str], dict[str, float]]:
    """What differs between the sweeps, and each tolerated column's largest relative difference."""
    out: list[str] = []
    pa = [(p["key"], p["status"]) for p in a["sweep"]["points"]]
    pb = [(p["key"], p["status"]) for p in b["sweep"]["points"]]
    if pa != pb:
        out.append(f"points or statuses differ: {pa} vs {pb}")
    units = {k: v.get("unit", "") for k, v in a.get("columns", {}).items()}
    rows_a = {(r["capture"], r["stage"]): r for r in a["rows"]}
    rows_b = {(r["capture"], r["stage"]): r for r in b["rows"]}
    if rows_a.keys() != rows_b.keys():
        out.append(f"rows differ: only in A {sorted(rows_a.keys() - rows_b.keys())}, "
                   f"only in B {sorted(rows_b.keys() - rows_a.keys())}")
    spread: dict[str, float] = {}
    for key in rows_a.keys() & rows_b.keys():
        ra, rb = rows_a[key], rows_b[key]
        for col, va in ra.items():
            vb = rb.get(col)
            if col in EXACT or units.get(col) == "inst":
                if va != vb:
                    out.append(f"{key[0]} {key[1]}: {col} {va} vs {vb}")
            elif isinstance(va, int | float) and isinstance(vb, int | float) and col in units:
                rel = 0.0 if va == vb else abs(va - vb) / max(abs(va), abs(vb))
                spread[col] = max(spread.get(col, 0.0), rel)
                if not math.isnan(rel) and rel > tolerance:
                    out.append(f"{key[0]} {key[1]}: {col} {va:g} vs {vb:g} ({rel:.1%} apart, over {tolerance:.0%})")
    return out, spread


def overhead(data: dict[str, Any]) -> list[float]:
    return [p["wall_s"] - p["seconds"] for p in data["sweep"]["points"] if p["status"] == "ok"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--tolerance", type=float, default=0.10)
    args = ap.parse_args(argv)
    a, b = load(args.a), load(args.b)
    diffs, spread = differences(a, b, args.tolerance)
    for name, data in (("A", a), ("B", b)):
        ov = overhead(data)
        pts = data["sweep"]["points"]
        worker = sum(p["seconds"] for p in pts)
        med = f"{statistics.median(ov):.2f} s" if ov else "n/a"
        print(f"{name} ({data['sweep']['engine']}): {len(pts)} points, {worker:.1f} s on the workers; "
              f"overhead per point (wall - worker): median {med}, max {max(ov, default=float('nan')):.2f} s")
    widest = sorted(spread.items(), key=lambda kv: -kv[1])[:5]
    print("largest relative differences: " + ", ".join(f"{k} {v:.1%}" for k, v in widest))
    for d in diffs:
        print(f"DIFFERENT: {d}")
    print(f"{len(a['rows'])} rows compared: " + ("match" if not diffs else f"{len(diffs)} differences"))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
