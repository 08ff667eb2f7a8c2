"""scripts/device/case_report.sh (and the gemm and hgemm scripts that call it) without a GPU: the
report folder is named after the card (h100 of "NVIDIA H100 80GB HBM3", whose HBM3 also holds an
H), with stand-ins for nvidia-smi and make."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("card", "script", "folder"), [
    ("NVIDIA H100 80GB HBM3", "hgemm_report.sh", "h100-hgemm"),
    ("NVIDIA H200", "gemm_report.sh", "h200-gemm"),
    ("Tesla V100-SXM2-16GB", "gemm_report.sh", "gpu-gemm"),
])
def test_the_report_folder_is_named_after_the_card(tmp_path, card, script, folder):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "nvidia-smi").write_text(f"#!/bin/sh\necho '{card}'\n")
    (bin_ / "make").write_text('#!/bin/sh\necho "make $*"\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}"}
    out = tmp_path / "out"
    res = subprocess.run(["bash", str(ROOT / "scripts" / "device" / script), str(out)], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    case = folder.split("-", 1)[1]
    assert f"make report CASE={case} OUT={out / folder}\n" in res.stdout
    assert (out / "make_report.log").read_text().startswith(f"make report CASE={case} OUT={out / folder}")
