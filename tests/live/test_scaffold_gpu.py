"""GPU test (marker ``gpu``; skipped without a GPU, run on the device): a folder made by
``new-case``, run live under ncu, has per-line rows for its own kernels, with the text ncu embedded
from the real kernels.cu (the module compiles under ``#line 1 "<real path>"``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_report.analysis.attribution import attribution
from profiler_report.analysis.run import load_run
from profiler_report.model.scaffold import new_case

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def test_the_scaffold_has_per_line_rows_with_its_source(tmp_path):
    dest = tmp_path / "scaffold"
    new_case(dest, "scaffold")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    res = subprocess.run([sys.executable, "-m", "profiler_report", "run", "--case", str(dest), "--size", "n=4194304",
                          "--no-peers", "--no-sanitize", "--out", str(tmp_path / "r")],
                         capture_output=True, text=True, env=env, timeout=500)
    assert res.returncode == 0, res.stderr[-3000:]
    run = load_run(tmp_path / "r" / "profile.ncu-rep")
    real = str((dest / "kernels.cu").resolve())
    assert real in run.capture.source_files and "scale_vector" in run.capture.source_files[real]
    for row in run.summary.itertuples():
        rows, note = attribution(run.capture, int(row.launch_id), None)
        assert rows and all(r["location"].startswith("kernels.cu:") for r in rows), (row.stage, rows)
        assert all(r["line_text"] for r in rows) and "the source text the capture embeds" in note
