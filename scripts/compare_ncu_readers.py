"""Read the committed captures with two ncu_report releases and compare what they give:
``python scripts/compare_ncu_readers.py 2025.3.1 2026.3.1`` (needs the package index once).

Each release is installed into its own virtual environment under ``$TMPDIR/ncu-readers/``, runs
the project's reader child (``profiler_report.capture.reader_child``) on every ``.ncu-rep`` under
tests/data and reports/, and the results are compared: launches, metric names, values and units,
rule results, per-instruction rows, source files and device attributes. Prints one line per
capture and every difference; exits 1 if a value, a rule or a per-instruction row differs (a unit
label that differs is listed but allowed: ncu_report 2026.3.1 names ``idc__requests.sum``'s unit
"request" where 2025.3.1 gives none).
"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _venv(version: str) -> Path:
    folder = Path(tempfile.gettempdir()) / "ncu-readers" / version
    py = folder / "bin" / "python"
    if not py.is_file():
        subprocess.run([sys.executable, "-m", "venv", folder], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", f"ncu-report=={version}"], check=True)
    return py


def _read(py: Path, capture: Path) -> dict:
    out = subprocess.run([py, "-m", "profiler_report.capture.reader_child", capture], cwd=ROOT, check=True,
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    return pickle.loads(out)


def _norm(x: object) -> object:
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_norm(v) for v in x]
    return x


def compare(a: dict, b: dict) -> tuple[list[str], list[str]]:
    """(differences that matter, unit labels that differ)."""
    bad, units = [], []
    if a.get("error") or b.get("error"):
        return [f"error: {a.get('error')!r} vs {b.get('error')!r}"], []
    va = {(r["launch_id"], r["metric"]): (r["value"], r["unit"]) for r in a["rows"]}
    vb = {(r["launch_id"], r["metric"]): (r["value"], r["unit"]) for r in b["rows"]}
    if set(va) != set(vb):
        bad.append(f"metric sets differ: {len(set(va) ^ set(vb))} (launch, metric) pairs")
    for key in sorted(set(va) & set(vb)):
        if va[key][0] != vb[key][0]:
            bad.append(f"value of {key}: {va[key][0]} vs {vb[key][0]}")
        elif va[key][1] != vb[key][1]:
            units.append(f"{key[1]}: {va[key][1]!r} vs {vb[key][1]!r}")
    for part in ("rules", "source", "files", "device"):
        if _norm(a[part]) != _norm(b[part]):
            bad.append(f"{part} differ")
    if a["launches"] != b["launches"]:
        bad.append(f"launches: {a['launches']} vs {b['launches']}")
    return bad, sorted(set(units))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.splitlines()[1], file=sys.stderr)
        return 2
    old, new = (_venv(v) for v in argv)
    failed = False
    for capture in sorted([*ROOT.glob("tests/data/*/profile.ncu-rep"), *ROOT.glob("reports/*/profile.ncu-rep")]):
        bad, units = compare(_read(old, capture), _read(new, capture))
        rel = capture.relative_to(ROOT)
        note = f" (unit labels differ: {'; '.join(units)})" if units else ""
        print(f"{rel}: {'DIFFERS' if bad else 'same'}{note}")
        for line in bad[:20]:
            print(f"  {line}")
        failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
