"""scripts/keep_compressed.sh: a live report folder's capture kept as profile.ncu-repz, its
one-part profile-parts.json dropped, and its page rendered again from the compressed capture."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "reports" / "h100-hgemm"

pytestmark = pytest.mark.slow


def test_a_folder_keeps_its_capture_compressed_and_its_page(tmp_path):
    zstd = shutil.which("zstd")
    if zstd is None:
        pytest.fail("the zstd command (Debian's zstd package) is needed here")
    folder = tmp_path / "h100-hgemm"
    shutil.copytree(SRC, folder)
    subprocess.run([zstd, "-d", "-q", "--rm", str(folder / "profile.ncu-repz"), "-o", str(folder / "profile.ncu-rep")],
                   check=True)
    (folder / "index.html").unlink()
    (folder / "profile-parts.json").write_text(json.dumps({"parts": [{"file": "profile.ncu-rep", "stages": ["x"]}]}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(["bash", str(ROOT / "scripts" / "keep_compressed.sh"), str(folder), sys.executable],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    assert (folder / "profile.ncu-repz").is_file() and not (folder / "profile.ncu-rep").exists()
    assert not (folder / "profile-parts.json").exists()
    assert "mma_in_flight" in (folder / "index.html").read_text()
