"""A user's own ladder from the first command: the thresholds `new-case` writes and the histogram
example's, gated on the committed captures (real H200 captures of those folders).

A regression is made from the same real capture by labelling its launches the wrong way round
(`--stage`): the gate must then fail, which shows the rules can fail at all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_run_once
from gate_support import cli

from profiler_report.cases import get_case
from profiler_report.cases.scaffold import new_case
from profiler_report.gate import load_thresholds

ROOT = Path(__file__).resolve().parent.parent
HISTOGRAM = ROOT / "examples" / "histogram"
HIST_CAPTURE = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"
#: The scaffold's live report (``new-case`` then ``run --case``), committed with its capture.
SCAFFOLD_CAPTURE = ROOT / "reports" / "h200-scaffold" / "profile.ncu-rep"
SWAPPED_HIST = ("--stage", "global_atomics=hist_global", "--stage", "shared_atomics=hist_shared",
                "--stage", "warp_private=hist_warp_vec", "--stage", "warp_private_vec=hist_warp$",
                "--ceiling", "copy=copy_bytes")


def test_new_case_writes_thresholds_on_its_own_stages(tmp_path):
    dest = tmp_path / "lad"
    new_case(dest)
    case = get_case(str(dest))
    assert case.thresholds() == (dest / "thresholds.toml").resolve()
    rules = load_thresholds(case.thresholds()).rules
    assert {r.stage for r in rules} == set(case.manifest.stage_ids())  # every stage, none other
    assert any(r.metric == "pct_of_copy_kernel" for r in rules)  # no stage above its ceiling


def test_the_histogram_example_passes_its_own_gate(monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, "check", HIST_CAPTURE)  # the case from provenance.json
    assert code == 0, out + err
    assert "0 failed, 0 not measured" in out


def test_the_histogram_gate_fails_when_a_stage_regresses(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "check", HIST_CAPTURE, "--case", HISTOGRAM, *SWAPPED_HIST)
    assert code == 1
    assert "FAIL warp_private_vec: global_load_sectors_per_request >= 16" in out


@pytest.mark.skipif(not SCAFFOLD_CAPTURE.is_file(), reason="the scaffold's live report is not committed")
def test_the_scaffold_passes_its_own_gate_and_fails_a_regression(monkeypatch, capsys, tmp_path):
    dest = tmp_path / "scaffold"
    new_case(dest, "scaffold")
    code, out, err = cli(monkeypatch, capsys, "check", SCAFFOLD_CAPTURE, "--case", dest)
    assert code == 0, out + err
    swapped = ("--stage", "strided=scale_coalesced", "--stage", "coalesced=scale_strided",
               "--stage", "vector=scale_vector", "--ceiling", "copy=copy_kernel")
    code, out, _ = cli(monkeypatch, capsys, "check", SCAFFOLD_CAPTURE, "--case", dest, *swapped)
    assert code == 1 and "FAIL coalesced: global_load_efficiency_pct == 100 %" in out


# --------------------------------------------------------------------------------------------
# check-case: offline, GPU-free (NVRTC from the wheel the spill check uses)

def _nvrtc_or_skip():
    from profiler_report.errors import NvrtcNotFoundError
    from profiler_report.util.nvrtc import nvrtc_library

    try:
        nvrtc_library()
    except NvrtcNotFoundError:
        if os.environ.get("CI"):
            pytest.fail("the nvidia-cuda-nvrtc wheel (pyproject.toml's test extra) is not installed on CI")
        pytest.skip("nvidia-cuda-nvrtc not installed (pip install -e '.[test]')")


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "profiler_report", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_new_case_then_check_case_passes_with_a_table(tmp_path):
    _nvrtc_or_skip()
    dest = tmp_path / "lad"
    assert _run_cli("new-case", str(dest)).returncode == 0
    res = _run_cli("check-case", str(dest))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:5] == ["stage", "role", "dtype", "kernel", "registers"]
    rows = [ln.split() for ln in lines[2:-1]]
    assert [(r[0], r[2]) for r in rows] == [(s, d) for d in ("float32", "float64")
                                            for s in ("strided", "coalesced", "vector", "copy")]
    assert all(int(r[4]) > 0 and r[5] == "0/0" for r in rows)  # registers from ptxas, no spills
    assert lines[-1].startswith("check-case: 8 kernels (float32, float64) compiled with NVRTC for sm_90")


def test_check_case_reads_registers_from_ptxas():
    _nvrtc_or_skip()
    from profiler_report.cases.folder import load_case_folder
    from profiler_report.live.check_case import check_case

    res = check_case(load_case_folder(HISTOGRAM))
    assert res.problems == []
    by_stage = {s.stage.id: s.entry for s in res.stages}
    # The kernel's own static shared memory, as ptxas counts it: one and eight 256-bin histograms.
    assert by_stage["shared_atomics"].shared_bytes == 1024 and by_stage["warp_private"].shared_bytes == 8192


BROKEN = [
    pytest.param(("stages.toml", "[ceiling]", "[ceiling"), r"bad stage manifest .*stages\.toml", id="stages.toml"),
    pytest.param(("case.py", "CASE = ScaleCase()", "raise RuntimeError('not yet')\nCASE = ScaleCase()"),
                 r"case\.py:\d+: case\.py does not import: RuntimeError: not yet", id="case.py raises"),
    pytest.param(("kernels.cu", "a.v[k] *= T(2);", "a.v[k] *= T(2;"),
                 r"kernels\.cu:\d+ \(stage vector\): NVRTC: error: expected a \"\)\" \[sm_90\] \(float32, float64\)",
                 id="kernel does not compile"),
    pytest.param(("case.py", "return Launch((-(-threads // BLOCK),), (BLOCK,))",
                  "return Launch((-(-threads // BLOCK),), (8 * BLOCK,))"),
                 r"case\.py: launch\(\) for stage strided: block \(2048,\) has 2048 threads, above 1024 per block; "
                 r"block dimension x = 2048 is above 1024 \(float32, float64\)", id="launch shape"),
]


@pytest.mark.parametrize("breakage, expected", BROKEN)
def test_a_broken_folder_is_exit_10_and_one_line(tmp_path, breakage, expected):
    _nvrtc_or_skip()
    dest = tmp_path / "lad"
    new_case(dest)
    _edit(dest / breakage[0], breakage[1], breakage[2])
    res = _run_cli("check-case", str(dest))
    assert res.returncode == 10, res.stdout + res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert all(ln.startswith("error: ") for ln in lines) and "Traceback" not in res.stderr
    assert re.search(expected, lines[0]), lines[0]
    if "Launch" in breakage[1]:  # one line per stage whose block is too large, every dtype in it
        assert len(lines) == 4 and all("2048 threads" in ln for ln in lines), lines
    else:
        assert len(lines) == 1, lines


def test_run_checks_the_folder_before_asking_for_a_gpu(tmp_path):
    # No GPU here: without the check first, this would be exit 8 (no GPU), not the kernel's line.
    _nvrtc_or_skip()
    dest = tmp_path / "lad"
    new_case(dest)
    _edit(dest / "kernels.cu", "a.v[k] *= T(2);", "a.v[k] *= T(2;")
    res = _run_cli("run", "--case", str(dest), "--no-counters", "--no-sanitize", "--out", str(tmp_path / "r"))
    assert res.returncode == 10, res.stderr
    assert res.stderr.count("\n") == 1 and "(stage vector): NVRTC: error" in res.stderr
    assert "check-case" in res.stderr  # the fix says how to see every problem offline


# --------------------------------------------------------------------------------------------
# Source lines of a user's kernels: the line information names the real file


def test_a_user_case_compiles_under_its_real_file_name(tmp_path):
    _nvrtc_or_skip()
    from profiler_report.live.kernels import module_source
    from profiler_report.util.nvrtc import compile_source

    dest = tmp_path / "lad"
    new_case(dest)
    case = get_case(str(dest))
    real = str(case.manifest.source.resolve())
    text = module_source(case)
    assert text.startswith(f'#line 1 "{real}"\n') and text.endswith(case.manifest.source_text())
    # Compiled under CuPy's kind of temporary name, the line table still names the real file,
    # which ncu --import-source reads and embeds.
    res = compile_source(text, "/tmp/tmpabc/0123456789abcdef0123456789abcdef.cubin.cu", ["scale_vector<float>"],
                         options=("-std=c++17", "-lineinfo"))
    assert res.ok, res.log
    files = re.findall(r'^\s*\.file\s+\d+\s+"([^"]+)"', res.ptx, re.M)
    assert real in files and not any(f.endswith(".cubin.cu") for f in files)
    # An error's line is the file's own line.
    broken = text.replace("a.v[k] *= T(2);", "a.v[k] *= T(2;")
    res = compile_source(broken, "/tmp/x.cubin.cu", ["scale_vector<float>"])
    line = case.manifest.source_text().splitlines().index("            a.v[k] *= T(2);") + 1
    assert f"{real}({line}): error" in res.log


def test_a_built_in_case_compiles_as_it_is():
    from profiler_report.live.kernels import module_source

    case = get_case("transpose")
    assert module_source(case) == case.manifest.source_text()


# --------------------------------------------------------------------------------------------
# A stage faster than its ceiling is called out on its section


def test_a_stage_above_its_ceiling_gets_a_note():
    from profiler_report.analysis.ceilings import outruns_ceiling_note

    assert outruns_ceiling_note(float("nan"), "copy") == "" and outruns_ceiling_note(None, "copy") == ""
    assert outruns_ceiling_note(104.9, "copy") == ""  # within the timings' spread
    assert "159% of its ceiling kernel `copy`" in outruns_ceiling_note(159.4, "copy")


def test_the_page_notes_a_stage_above_its_ceiling():
    # The real histogram capture and timings; one stage's pct_of_copy_kernel set to what the
    # scaffold's 4-byte ceiling gave its 16-byte stage on the H200 (159 %): a unit test of the page.
    from dataclasses import replace

    from profiler_report.report.build import _inputs
    from profiler_report.report.page import build_page

    run = load_run_once(HIST_CAPTURE)
    page = build_page(_inputs(run, False, None))
    assert not any("of its ceiling kernel" in n for s in page.stages for n in s.notes)  # 68 % at most
    summary = run.summary.copy()
    summary.loc[summary["stage"] == "warp_private_vec", "pct_of_copy_kernel"] = 159.4
    page = build_page(replace(_inputs(run, False, None), analysis=replace(run.analysis, summary=summary)))
    notes = {s.id: [n for n in s.notes if "of its ceiling kernel" in n] for s in page.stages}
    assert notes["warp_private_vec"] and "159%" in notes["warp_private_vec"][0]
    assert not any(notes[s] for s in notes if s != "warp_private_vec")


# --------------------------------------------------------------------------------------------
# duration_us: ncu's own time, on any capture, labelled as a single profiled launch

FOREIGN = ROOT / "tests" / "data" / "foreign"


def _thresholds(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text("version = 1\n" + body)
    return path


def test_a_foreign_capture_is_gated_on_ncu_time_without_timings(monkeypatch, capsys, tmp_path):
    assert not (FOREIGN / "timings.json").exists()
    t = _thresholds(tmp_path, '[stage.transposeCoalesced]\n'
                    'rules = ["duration_us < previous", "duration_us <= 200 us"]\n')
    code, out, err = cli(monkeypatch, capsys, "check", FOREIGN / "all_4096.ncu-rep", "--thresholds", t)
    assert code == 0, out + err
    assert out.count("(single profiled launch)") == 2 and "2 passed, 0 failed" in out
    # The same rule fails when it should: coalesced is not faster than the plain copy.
    t = _thresholds(tmp_path, '[stage.transposeCoalesced]\nrules = ["duration_us <= 0.5 * previous"]\n'
                    '[stage.transposeNaive]\nrules = ["duration_us < previous"]\n')
    code, out, _ = cli(monkeypatch, capsys, "check", FOREIGN / "all_4096.ncu-rep", "--thresholds", t)
    assert code == 1 and "FAIL transposeNaive: duration_us < previous" in out
    assert "[value: single profiled launch]" in out


def test_a_ladder_of_captures_is_gated_on_ncu_time(monkeypatch, capsys, tmp_path):
    t = _thresholds(tmp_path, '[stage.coalesced]\nrules = ["duration_us < previous"]\n'
                    '[stage.conflict_free]\nrules = ["duration_us < previous"]\n')
    ladder = [FOREIGN / "ladder" / f"{k}.ncu-rep" for k in ("copy", "naive", "coalesced", "conflict_free")]
    code, out, err = cli(monkeypatch, capsys, "check", *ladder, "--thresholds", t)
    assert code == 0, out + err
    assert "2 passed" in out


def test_a_live_capture_is_gated_on_both_times(monkeypatch, capsys, tmp_path):
    # timings.json beside the capture: `duration` is the event-timed median, duration_us ncu's.
    t = _thresholds(tmp_path, '[stage.warp_private_vec]\nrules = ["duration < previous", "duration_us < previous"]\n')
    code, out, err = cli(monkeypatch, capsys, "check", HIST_CAPTURE, "--thresholds", t)
    assert code == 0, out + err
    assert out.count("(single profiled launch)") == 1
