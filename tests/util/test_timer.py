"""StepTimer's progress: stage i of n with the last run's estimate; plain lines off a terminal."""

from __future__ import annotations

import pytest

from profiler_report.util.timer import StepTimer


def test_ticks_are_plain_lines_off_a_terminal_with_the_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    timer = StepTimer(estimates={"validate": 12.0})
    with timer.step("validate"):
        timer.tick(1, 3, "naive")
        timer.tick(2, 3, "smem")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "[validate] ... (last run: 12.0 s)"
    assert err[1].startswith("[validate] 1 of 3: naive (0 s, about 12 s left (last run 12 s))")
    assert err[2].startswith("[validate] 2 of 3: smem")
    assert "\r" not in "".join(err)


def test_on_a_terminal_one_line_is_updated_and_cleared_before_the_next_log(capsys, monkeypatch) -> None:
    from profiler_report.util import timer as mod

    monkeypatch.setattr(mod, "_tty", lambda: True)
    timer = StepTimer()
    with timer.step("profile"):
        timer.tick(1, 2, "kernel a")
        timer.tick(2, 2, "kernel b")
    err = capsys.readouterr().err
    # each tick rewrites the line; the step's end line clears it first and ends with a newline
    assert err.startswith("[profile] ...\n\r\x1b[K[profile] 1 of 2: kernel a (0 s)\r\x1b[K[profile] 2 of 2: kernel b")
    assert err.endswith("\r\x1b[K[profile] 0.0 s\n")


def test_no_tick_outside_a_step(capsys: pytest.CaptureFixture[str]) -> None:
    StepTimer().tick(1, 2, "x")
    assert capsys.readouterr().err == ""
