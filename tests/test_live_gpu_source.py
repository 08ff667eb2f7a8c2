"""The hold kernel of live/gpu.py compiles for sm_90 (nvcc, the compiler NVRTC shares its front
end with); its behaviour is tested on the device (tests/test_live_gpu.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from profiler_report.live import gpu

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None and not os.environ.get("CI"), reason="nvcc not installed")
def test_the_hold_kernel_compiles_for_sm90_without_spills(tmp_path):
    assert NVCC is not None, "nvcc is not on PATH on the CI machine"
    src = tmp_path / "hold.cu"
    src.write_text(gpu._HOLD_SOURCE)
    res = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "hold.cubin"),
                          str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Compiling entry function 'hold_queue'" in res.stderr
    assert re.search(r"0 bytes spill stores", res.stderr), res.stderr
