"""How fast the tool itself is: cold `make report`-equivalent runs of the transpose and the
reduction with an empty result cache and empty compiler caches (CuPy, Triton, TorchInductor),
then a one-stage edit (one stage's kernel source changed in a copy of the tree: a comment
appended inside its `// stage:` block, so its hash changes), and
`render --from` a capture. Prints a table of wall times and each run's phases (the tool's own
"time spent" table) and writes a small JSON (default reports/h200/tool-speed.json).

    python scripts/bench_tool.py                      # on a GPU machine with ncu: every run
    python scripts/bench_tool.py --only render --render-from reports/h200/profile.ncu-rep
                                                      # render alone (any machine), merged into the JSON

A benchmark, not a test: the targets (cold <= 60 s per case, one-stage edit <= 20 s, render --from
<= 3 s on a 2-core machine) are reported as met or not, never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"cold": 60.0, "edit": 20.0, "render": 3.0}
#: The stage whose kernel the edit run changes, per case.
EDITED = {"transpose": "padded", "reduction": "sequential"}
SOURCES = {"transpose": "kernels/transpose/transpose.cu", "reduction": "kernels/reduction/reduction.cu"}
_PHASE = re.compile(r"^\s{2}(\S[^\s].*?|\S+)\s+([0-9.]+) s$")


def phases(stderr: str) -> dict[str, float]:
    """The "time spent:" table a run prints last, as {phase: seconds} (``total`` included)."""
    at = stderr.rfind("time spent:")
    out: dict[str, float] = {}
    for line in stderr[at:].splitlines()[1:] if at >= 0 else []:
        m = _PHASE.match(line)
        if not m:
            break
        out[m.group(1).strip()] = float(m.group(2))
    return out


def run_tool(args: list[str], tree: Path, cache: Path, log: Path) -> dict[str, Any]:
    """``python -m profiler_report ARGS`` from ``tree`` with the result cache in ``cache``: wall
    time, exit status, phases; its output goes to ``log``."""
    env = {**os.environ, "PROFILER_REPORT_CACHE": str(cache), "PYTHONPATH": f"{tree}{os.pathsep}"
           + os.environ.get("PYTHONPATH", ""), "PYTHONUNBUFFERED": "1", **compiler_caches(cache.parent)}
    t0, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([sys.executable, "-m", "profiler_report", *args], cwd=tree, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout: list[str] = []
    reader = threading.Thread(target=lambda: stdout.append(proc.stdout.read() if proc.stdout else ""))
    reader.start()
    stderr, stamped = stamp_lines(proc.stderr, t0)
    reader.join()
    code = proc.wait()
    wall, after = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of the tool and its children: what a busy shared machine does not inflate.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    log.write_text(f"$ profiler-report {' '.join(args)}\n{''.join(stdout)}\n{stamped}")
    print(f"  {' '.join(args[:3])}...: exit {code}, {wall:.1f} s (log {log})", file=sys.stderr, flush=True)
    spent = phases(stderr)
    return {"args": args, "exit": code, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "load_average_1min": round(os.getloadavg()[0], 1), "phases": spent,
            # the interpreter's start and exit, imports: the wall time no step of the tool's table holds
            "outside_steps_s": round(wall - spent["total"], 2) if "total" in spent else None,
            "log": log.name}


def stamp_lines(stream: IO[str] | None, t0: float) -> tuple[str, str]:
    """``stream`` read to its end: (its text, the same lines each prefixed with the seconds since
    ``t0`` at which it arrived: where the log's wall time went between the steps)."""
    plain, stamped = [], []
    for line in stream or ():
        plain.append(line)
        stamped.append(f"{time.monotonic() - t0:7.2f} {line}")
    return "".join(plain), "".join(stamped)


def compiler_caches(work: Path) -> dict[str, str]:
    """The compilers' caches of the runs (CuPy's kernels, Triton's, TorchInductor's), in the work
    folder: a cold run starts with them empty, as on a machine that never ran the tool."""
    root = work / "compilers"
    return {"CUPY_CACHE_DIR": str(root / "cupy"), "TRITON_CACHE_DIR": str(root / "triton"),
            "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor")}


def edited_copy(work: Path, case: str) -> Path:
    """A copy of the tree with ``EDITED[case]``'s kernel block changed by one comment line."""
    tree = work / f"tree-{case}"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir()
    for name in ("profiler_report", "kernels", "templates"):
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "pyproject.toml", tree / "pyproject.toml")
    src = tree / SOURCES[case]
    text = src.read_text()
    marker = f"// stage: {EDITED[case]}\n"
    if marker not in text:
        raise SystemExit(f"bench_tool: no `{marker.strip()}` block in {SOURCES[case]}")
    src.write_text(text.replace(marker, marker + "// edited by scripts/bench_tool.py: a one-stage change\n", 1))
    return tree


def reuse_summary(folder: Path) -> dict[str, Any]:
    """What the run reused (reuse.json) and which stages its fresh capture holds (profile-parts.json)."""
    out: dict[str, Any] = {}
    if (folder / "reuse.json").is_file():
        doc = json.loads((folder / "reuse.json").read_text())
        out["reused"] = sorted({f"{r['what']}:{r['stage']}" if r["stage"] else r["what"] for r in doc["reused"]})
        out["retimed"] = doc.get("retimed", [])
        out["choices"] = [{k: c.get(k) for k in ("stage", "chosen", "chosen_us", "runner_up", "runner_up_us")}
                          for c in doc.get("choices", [])]
    if (folder / "profile-parts.json").is_file():
        parts = json.loads((folder / "profile-parts.json").read_text())["parts"]
        out["profiled_again"] = [s for p in parts if p["file"] == "profile.ncu-rep" for s in p["stages"]]
    return out


def measure(work: Path, cases: list[str], render_from: Path | None, only: str) -> list[dict[str, Any]]:
    cache = work / "cache"
    rows: list[dict[str, Any]] = []
    if only in ("all", "runs"):
        shutil.rmtree(cache, ignore_errors=True)  # cold: an empty result cache and empty compiler caches
        shutil.rmtree(work / "compilers", ignore_errors=True)
        for case in cases:
            res = run_tool(["run", "--case", case, "--out", str(work / f"{case}-cold")], ROOT, cache,
                           work / f"{case}-cold.log")
            rows.append({"run": f"{case} cold", "kind": "cold", **res, **reuse_summary(work / f"{case}-cold")})
        for case in cases:
            tree = edited_copy(work, case)
            res = run_tool(["run", "--case", case, "--out", str(work / f"{case}-edit")], tree, cache,
                           work / f"{case}-edit.log")
            rows.append({"run": f"{case} one-stage edit ({EDITED[case]})", "kind": "edit", **res,
                         **reuse_summary(work / f"{case}-edit")})
    if only in ("all", "render"):
        capture = render_from or work / f"{cases[0]}-cold" / "profile.ncu-rep"
        # Twice: the first reads the capture with ncu_report (and keeps its tables in the result
        # cache), the second loads them from there, as a user's next render of it does.
        for n in ("first", "again"):
            res = run_tool(["render", "--from", str(capture), "--out", str(work / "render")], ROOT, cache,
                           work / f"render-{n}.log")
            rows.append({"run": f"render --from {capture.name} ({n})", "kind": "render", "capture": str(capture),
                         **res})
    for r in rows:
        r["target_s"] = TARGETS[r["kind"]]
        r["met"] = r["exit"] == 0 and r["wall_s"] <= r["target_s"]
    return rows


def machine() -> dict[str, Any]:
    gpu = ""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    commit = os.environ.get("PROFILER_REPORT_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"host": platform.node(), "cpus": os.cpu_count(), "gpu": gpu or "none", "commit": commit or "unknown",
            "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'run':<44} {'wall s':>7} {'cpu s':>6} {'target':>7}  met  phases (time spent)"]
    for r in rows:
        ph = ", ".join(f"{k} {v:.1f}" for k, v in r["phases"].items() if k != "total")
        lines.append(f"{r['run']:<44} {r['wall_s']:7.1f} {r['cpu_s']:6.1f} {r['target_s']:7.0f}  "
                     f"{'yes' if r['met'] else 'NO ':<4} {ph}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "h200" / "tool-speed.json")
    p.add_argument("--cases", default="transpose,reduction")
    p.add_argument("--only", choices=["all", "runs", "render"], default="all")
    p.add_argument("--render-from", type=Path, default=None, help="the capture to render (default: the cold run's)")
    p.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one, kept)")
    args = p.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-tool-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = measure(work, [c for c in args.cases.split(",") if c], args.render_from, args.only)
    print(table(rows))
    doc = json.loads(args.out.read_text()) if args.out.is_file() and args.only != "all" else {"runs": []}
    kinds = {r["kind"] for r in rows}
    here = machine()
    for r in rows:
        r["machine"] = here
    doc = {"schema": "profiler-report.tool-speed/1", "targets_s": TARGETS,
           "runs": [r for r in doc.get("runs", []) if r["kind"] not in kinds] + rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out} (work folder {work})")
    return 0 if all(r["exit"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
