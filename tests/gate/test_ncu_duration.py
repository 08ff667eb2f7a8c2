"""duration_us: ncu's own time of a launch (gpu__time_duration.sum), gated on any capture with or
without timings.json, ladders of captures too, and labelled as a single profiled launch."""

from __future__ import annotations

from pathlib import Path

from gate_support import cli

ROOT = Path(__file__).resolve().parents[2]
HISTOGRAM = ROOT / "examples" / "histogram"
HIST_CAPTURE = ROOT / "tests" / "data" / "h200_histogram" / "profile.ncu-rep"


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
