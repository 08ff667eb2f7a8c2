"""A user's own ladder from the first command: the thresholds `new-case` writes and the histogram
example's, gated on the committed captures (real H200 captures of those folders).

A regression is made from the same real capture by labelling its launches the wrong way round
(`--stage`): the gate must then fail, which shows the rules can fail at all.
"""

from __future__ import annotations

from pathlib import Path

from gate_support import cli

from profiler_report.gate import load_thresholds
from profiler_report.model.registry import get_case
from profiler_report.model.scaffold import new_case

ROOT = Path(__file__).resolve().parents[2]
HISTOGRAM = ROOT / "examples" / "histogram"
HIST_CAPTURE = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"
#: The scaffold's live report (``new-case`` then ``run --case``), committed with its capture.
SCAFFOLD_CAPTURE = ROOT / "reports" / "h200-scaffold" / "profile.ncu-repz"
#: The Python scaffold's live report (``new-case --python /tmp/pyladder`` then ``run --case``).
PY_SCAFFOLD_CAPTURE = ROOT / "reports" / "h200-pyscaffold" / "profile.ncu-repz"
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


def test_the_scaffold_passes_its_own_gate_and_fails_a_regression(monkeypatch, capsys, tmp_path):
    dest = tmp_path / "scaffold"
    new_case(dest, "scaffold")
    code, out, err = cli(monkeypatch, capsys, "check", SCAFFOLD_CAPTURE, "--case", dest)
    assert code == 0, out + err
    swapped = ("--stage", "strided=scale_coalesced", "--stage", "coalesced=scale_strided",
               "--stage", "vector=scale_vector", "--ceiling", "copy=copy_kernel")
    code, out, _ = cli(monkeypatch, capsys, "check", SCAFFOLD_CAPTURE, "--case", dest, *swapped)
    assert code == 1 and "FAIL coalesced: global_load_efficiency_pct == 100 %" in out


def test_the_python_scaffold_passes_its_own_gate(monkeypatch, capsys, tmp_path):
    dest = tmp_path / "pyladder"  # the name the recorded run's folder had
    new_case(dest, python=True)
    rules = load_thresholds(get_case(str(dest)).thresholds()).rules
    assert {r.stage for r in rules} <= set(get_case(str(dest)).manifest.stage_ids()) and rules
    code, out, err = cli(monkeypatch, capsys, "check", PY_SCAFFOLD_CAPTURE, "--case", dest)
    assert code == 0, out + err
    assert "3 passed, 0 failed" in out
