"""Where a cold transpose run's seconds go inside its processes: the run's own process under
cProfile (a cold `run --case transpose`, empty result cache and compiler caches), then the peers'
process under cProfile, asked for its warm-up and its timings as the run asks it
(:mod:`profiler_report.live.peers_process`), each request's wall time printed.

    python3 lab/run_profile.py OUTDIR        # on the GPU machine, from the repository root

Writes OUTDIR/run.prof, OUTDIR/run.txt (the 70 costliest calls by cumulative time, the run's
log), OUTDIR/peers.prof, OUTDIR/peers.txt. Nothing here is part of the tool.
"""

from __future__ import annotations

import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from profiler_report.model.experiment import RESULT_PREFIX

ROOT = Path(__file__).resolve().parent.parent
SIZE = {"rows": 8192, "cols": 8192}


def stats(prof: Path, lines: int = 70) -> str:
    import io

    buf = io.StringIO()
    pstats.Stats(str(prof), stream=buf).sort_stats("cumulative").print_stats(lines)
    return buf.getvalue()


def cold_env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PROFILER_REPORT_CACHE": str(tmp / "rc"), "CUPY_CACHE_DIR": str(tmp / "cupy"),
            "TRITON_CACHE_DIR": str(tmp / "triton"), "TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor"),
            "PYTHONUNBUFFERED": "1"}


def profile_run(out: Path, tmp: Path) -> None:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out / "run.prof"), "-m", "profiler_report",
                           "run", "--case", "transpose", "--out", str(tmp / "report")],
                          capture_output=True, text=True, env=cold_env(tmp), cwd=ROOT)
    wall = time.monotonic() - t0
    text = f"wall {wall:.1f} s, exit {proc.returncode}\n\n{proc.stderr[-6000:]}\n\n"
    if (out / "run.prof").is_file():
        text += stats(out / "run.prof")
    (out / "run.txt").write_text(text)
    print(f"run under cProfile: {wall:.1f} s, exit {proc.returncode}", flush=True)


def profile_peers(out: Path, tmp: Path) -> None:
    from profiler_report.model.registry import get_case

    case = get_case("transpose")
    stages = [[s.id, list(s.targs)] for s in case.manifest.stages]
    argv = [sys.executable, "-m", "cProfile", "-o", str(out / "peers.prof"), "-m", "profiler_report.live.target",
            "peers", "--case", "transpose", "--size", json.dumps(SIZE), "--dtype", "float32"]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=cold_env(tmp), cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    lines = [f"started {time.monotonic() - t0:.2f}"]
    proc.stdin.write(json.dumps({"warm": True}) + "\n")
    proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith("profiler-report-peers-warmed"):
            break
    lines.append(f"warmed (imports, then the warm-up) {time.monotonic() - t0:.2f}")
    t1 = time.monotonic()
    request = {"stages": stages, "repeats": 30, "provenance": {}}
    rest, _ = proc.communicate(json.dumps(request) + "\n", timeout=300)
    lines.append(f"timings answered {time.monotonic() - t1:.2f} s after the request; exit {proc.returncode}")
    lines += [ln[:300] for ln in rest.splitlines() if not ln.startswith(RESULT_PREFIX)][-20:]
    text = "\n".join(lines) + "\n\n" + (stats(out / "peers.prof") if (out / "peers.prof").is_file() else "")
    (out / "peers.txt").write_text(text)
    print("\n".join(lines[:3]), flush=True)


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="run-profile-") as t:
        profile_run(out, Path(t) / "run")
    with tempfile.TemporaryDirectory(prefix="run-profile-") as t:
        profile_peers(out, Path(t) / "peers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
