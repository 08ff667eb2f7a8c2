"""Compare two `profiler-report bench` JSONs of the same sweep (e.g. in-process against
`--cluster local`): the same points and rows, the same correctness, GB/s within the spread, and
the fan-out's overhead per point.

    python scripts/compare_bench.py inprocess.json cluster.json

Rows are matched by (name, kind, size, dtype); "within the spread" means the two rows' p10..p90
event-time bands overlap (the rule analysis/compare.py applies to two runs). Correctness is the
row's timing kind and whether its note starts with WRONG. The overhead of a point is its
client-seen wall time (sweep.points[].wall_s) minus the time the point took where it ran
(seconds), per file; the difference of the two files' wall times is printed too.

Exit status: 0 all match, 1 a difference (listed), 2 a file unreadable or without sweep points.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"error: cannot read {path}: {exc} (fix: pass a bench JSON written by profiler-report bench)")
    if not isinstance(data.get("sweep", {}).get("points"), list):
        sys.exit(f"error: {path} has no sweep.points (fix: write it with this version of profiler-report bench)")
    return data


def row_key(r: dict[str, Any]) -> tuple[Any, ...]:
    size = r.get("size") or f"{r.get('rows')}x{r.get('cols')}"
    return r["name"], r["kind"], size, r["dtype"]


def bands_overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    vals = [a.get("p10_us"), a.get("p90_us"), b.get("p10_us"), b.get("p90_us")]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        return True  # an untimed row (skipped, wrong): correctness decides it
    return not (vals[2] > vals[1] or vals[3] < vals[0])


def correctness(r: dict[str, Any]) -> tuple[str, bool]:
    return r.get("timing", ""), str(r.get("note", "")).startswith("WRONG")


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Differences between two bench JSONs of one sweep, one line each ([] when they match)."""
    out = []
    pa = {p["key"]: p for p in a["sweep"]["points"]}
    pb = {p["key"]: p for p in b["sweep"]["points"]}
    if set(pa) != set(pb):
        out.append(f"points differ: {len(set(pa) - set(pb))} only in the first, {len(set(pb) - set(pa))} only in the "
                   "second")
    out += [f"point {k} {pa[k]['status']} / {pb[k]['status']}" for k in sorted(set(pa) & set(pb))
            if pa[k]["status"] != pb[k]["status"]]
    ra, rb = {row_key(r): r for r in a["rows"]}, {row_key(r): r for r in b["rows"]}
    if set(ra) != set(rb):
        out.append(f"rows differ: {sorted(set(ra) ^ set(rb))[:5]}")
    for k in sorted(set(ra) & set(rb), key=str):
        if correctness(ra[k]) != correctness(rb[k]):
            out.append(f"{k}: correctness {correctness(ra[k])} vs {correctness(rb[k])}")
        elif not bands_overlap(ra[k], rb[k]):
            out.append(f"{k}: GB/s {ra[k]['gbps']:.0f} vs {rb[k]['gbps']:.0f}, p10..p90 bands do not overlap")
    return out


def overhead_lines(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> list[str]:
    lines = [f"{'point':<16} {'A wall s':>9} {'A ran s':>8} {'B wall s':>9} {'B ran s':>8} {'B-A wall s':>10}  label"]
    pb = {p["key"]: p for p in b["sweep"]["points"]}
    deltas, over_a, over_b = [], [], []
    for p in a["sweep"]["points"]:
        q = pb.get(p["key"])
        if q is None or p["status"] != "ok" or q["status"] != "ok":
            continue
        d = q["wall_s"] - p["wall_s"]
        deltas.append(d)
        over_a.append(p["wall_s"] - p["seconds"])
        over_b.append(q["wall_s"] - q["seconds"])
        pt = p["point"]
        label = f"{pt['unit']} {' '.join(f'{k}={v}' for k, v in pt['size'])} {pt['dtype']}"
        lines.append(f"{p['key']:<16} {p['wall_s']:9.2f} {p['seconds']:8.2f} {q['wall_s']:9.2f} {q['seconds']:8.2f} "
                     f"{d:10.2f}  {label}")
    if deltas:
        lines.append(f"A = {names[0]} ({a['sweep']['engine']}), B = {names[1]} ({b['sweep']['engine']})")
        lines.append(f"overhead per point (wall - ran): A median {statistics.median(over_a):.3f} s, "
                     f"B median {statistics.median(over_b):.3f} s; B - A wall: "
                     f"median {statistics.median(deltas):.3f} s, mean {statistics.mean(deltas):.3f} s "
                     f"over {len(deltas)} points")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    a, b = load(Path(argv[0])), load(Path(argv[1]))
    print("\n".join(overhead_lines(a, b, (argv[0], argv[1]))))
    diffs = compare(a, b)
    for d in diffs:
        print(f"DIFFERENT: {d}")
    print("same points, same correctness, GB/s within the spread" if not diffs else f"{len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
