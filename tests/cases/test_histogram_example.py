"""examples/histogram: the worked example of a case folder, through the path a user's folder takes.

Its kernels are compiled for sm_90 with nvcc; its case.py runs on the CPU stand-in of the live
side (tests/fakes.py: numpy arrays, Python "kernels" that count as the CUDA ones do, event times
that are test values). The live H200 capture (tests/data/h200_histogram/, written by
scripts/record_examples.sh) is rendered, summarized and checked as any user's capture is; those
tests skip until the fixture is committed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fakes import install_numpy_gpu

from profiler_report.errors import KernelIncorrectError
from profiler_report.live.config import RunConfig
from profiler_report.live.session import live_run
from profiler_report.model.registry import get_case

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "histogram"
FIXTURE = ROOT / "tests" / "data" / "h200_histogram"
CAPTURE = FIXTURE / "profile.ncu-rep"
NVCC = shutil.which("nvcc")
needs_fixture = pytest.mark.skipif(not CAPTURE.is_file(), reason="tests/data/h200_histogram/ not recorded yet "
                                   "(bash scripts/record_examples.sh on a GPU machine)")


def _histogram(grid, block, x, bins, n):  # what every histogram stage computes
    bins += np.bincount(x, minlength=256).astype(np.uint32)


def _copy(grid, block, x, y, n):
    y[:] = x


KERNELS = {"hist_global": _histogram, "hist_shared": _histogram, "hist_warp": _histogram,
           "hist_warp_vec": _histogram, "copy_bytes": _copy}


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "profiler_report", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_the_example_is_a_case_folder():
    case = get_case("examples/histogram" if Path.cwd() == ROOT else str(EXAMPLE))
    assert case.name == "histogram" and case.user_folder == EXAMPLE.resolve()
    assert case.manifest.stage_ids() == ["global_atomics", "shared_atomics", "warp_private", "warp_private_vec"]
    assert case.manifest.ceiling.id == "copy" and case.dtypes == ("uint8",) and case.default_dtype == "uint8"
    assert all(s.expect for s in case.manifest.stages[1:])


def test_every_stage_compiles_for_sm90(tmp_path):
    if NVCC is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc is not on PATH on the CI machine")
        pytest.skip("nvcc not installed")
    case = get_case(str(EXAMPLE))
    lines = [f'#include "{case.manifest.source}"']
    for st in case.manifest.stages:
        lines.append(f"template __global__ void {st.kernel}<unsigned char>(const unsigned char*, unsigned int*, "
                     "long long);")
    lines.append("template __global__ void copy_bytes<unsigned char>(const unsigned char*, unsigned char*, long long);")
    (tmp_path / "inst.cu").write_text("\n".join(lines) + "\n")
    res = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-lineinfo", "-Xptxas", "-v", "-o",
                          str(tmp_path / "inst.cubin"), str(tmp_path / "inst.cu")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(re.findall(r"Compiling entry function", res.stderr)) == 5
    blocks = re.split(r"Compiling entry function '_Z\d+", res.stderr)[1:]
    smem = {b.split("IhE")[0]: (re.findall(r"(\d+) bytes smem", b) or ["0"])[0] for b in blocks}
    assert smem.get("hist_shared") == "1024" and smem.get("hist_warp") == "8192"  # what stages.toml expects


def test_the_live_side_validates_and_times_it(tmp_path, monkeypatch):
    from profiler_report.report.build import render_timings_only

    install_numpy_gpu(monkeypatch, KERNELS)
    monkeypatch.chdir(ROOT)
    cfg = RunConfig(case="examples/histogram", size={"n": 100_003}, dtype="uint8", counters=False, sanitize=False)
    live_run(cfg, tmp_path / "r", render=lambda out: render_timings_only(out))
    validation = json.loads((tmp_path / "r" / "validation.json").read_text())
    assert [v["correct"] for v in validation] == [True] * 5
    timed = {t["name"]: t for t in json.loads((tmp_path / "r" / "timings.json").read_text())["timings"]}
    # The case's work model: n read + 1 KiB of bins written; the copy moves 2n.
    assert timed["warp_private"]["gbps"] == pytest.approx((100_003 + 1024) / (timed["warp_private"]["median_us"] * 1e3))
    assert timed["copy"]["gbps"] == pytest.approx(2 * 100_003 / (timed["copy"]["median_us"] * 1e3))
    prov = json.loads((tmp_path / "r" / "provenance.json").read_text())
    assert prov["case_dir"] == "examples/histogram" and prov["dtype"] == "uint8"
    assert "Privatized per warp" in (tmp_path / "r" / "index.html").read_text()


def test_a_lost_count_is_a_wrong_stage(tmp_path, monkeypatch):
    def drops_one_count(grid, block, x, bins, n):
        _histogram(grid, block, x, bins, n)
        bins[128] -= 1

    install_numpy_gpu(monkeypatch, {**KERNELS, "hist_warp": drops_one_count})
    cfg = RunConfig(case=str(EXAMPLE), size={"n": 4096}, dtype="uint8", counters=False, sanitize=False)
    with pytest.raises(KernelIncorrectError, match=r"stage warp_private \(.*kernels\.cu\) is wrong .*out\[128\]"):
        live_run(cfg, tmp_path / "r", render=None)


def test_the_skewed_input_collides_on_few_bins(monkeypatch):
    from fakes import NumpyCupy

    x = get_case(str(EXAMPLE)).make_input(NumpyCupy(), {"n": 1 << 16}, "uint8", 1)
    counts = np.sort(np.bincount(x, minlength=256))[::-1]
    assert x.dtype == np.uint8 and counts[:64].sum() > 0.9 * x.size  # about 64 bins take nearly all values


# --------------------------------------------------------------------------------------------
# The live H200 capture (tests/data/h200_histogram/)


@needs_fixture
def test_the_capture_renders_through_the_recorded_case_folder(tmp_path):
    res = _cli("render", "--from", str(CAPTURE), "--out", str(tmp_path))  # provenance.json names the folder
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "index.html").read_text()
    for st in ("global_atomics", "shared_atomics", "warp_private", "warp_private_vec"):
        assert f'id="stage-{st}"' in html
    assert 'id="stage-copy"' not in html  # the ceiling is no stage
    summary = json.loads((tmp_path / "summary.json").read_text())
    roles = {s["stage"]: s["role"] for s in summary["stages"]}
    assert roles["copy"] == "ceiling" and list(roles).count("copy") == 1
    verdicts = {(e["stage"], e["metric"]): e["verdict"] for e in summary["expectations"]}
    assert len(verdicts) == 6
    assert all(v in ("confirmed", "refuted", "no effect") for v in verdicts.values()), verdicts  # all measured


@needs_fixture
def test_the_capture_with_case_from_elsewhere(tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(CAPTURE, alone / "profile.ncu-rep")  # no provenance.json beside it
    res = _cli("summary", str(alone / "profile.ncu-rep"), cwd=tmp_path)
    assert res.returncode == 2 and "made by case 'histogram'" in res.stderr and "--case" in res.stderr
    res = _cli("summary", str(alone / "profile.ncu-rep"), "--case", str(EXAMPLE), "--format", "json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = {r["stage"]: r for r in json.loads(res.stdout)["stages"]}
    smem = {st: rows[st]["shared_mem_per_block_bytes"] for st in ("shared_atomics", "warp_private")}
    assert smem["warp_private"] == 8 * smem["shared_atomics"]
    assert rows["warp_private_vec"]["global_load_sectors_per_request"] >= 8 * rows["warp_private"][
        "global_load_sectors_per_request"]


@needs_fixture
def test_the_raw_metric_expectation_is_measured_on_the_capture():
    from profiler_report.analysis.run import load_run

    run = load_run(CAPTURE, case=get_case(str(EXAMPLE)))
    exp = run.analysis.expectations
    l2 = exp[exp["metric"].str.startswith("lts__t_requests_srcunit_tex_op_red.sum")].iloc[0]
    assert l2["stage"] == "shared_atomics" and l2["old"] > 0 and not np.isnan(l2["new"])
