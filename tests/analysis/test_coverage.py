"""A capture of a case that lacks stages, or whose launches' NVTX ranges do not all resolve
(analysis/coverage.py): the page and stderr name what is missing, render exits 5 unless
``--stages`` asks for the subset, and no step ratio, verdict or expected effect spans a gap."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gate_support import cli
from hostile_support import RANGE, Raw

from profiler_report.analysis.run import load_run

PRESENT = "naive,smem,vec_padded,vec_swizzled,vec_deep,vec_colwalk"


def _partial(tmp_path: Path) -> Path:
    """The real capture without the launches of padded and unrolled (header and units rows kept)."""
    return Raw().drop_launches("padded", "unrolled").write(tmp_path / "partial.csv")


def _unresolved(tmp_path: Path) -> Path:
    """The real capture with padded's launch outside every NVTX range (as a corrupted file loses it)."""
    return Raw().set("padded", RANGE, "").write(tmp_path / "unresolved.csv")


def test_a_gap_is_no_step(tmp_path: Path) -> None:
    run = load_run(_partial(tmp_path))
    cover = run.analysis.coverage
    assert cover is not None and cover.gaps == {"vec_padded": ("padded", "unrolled")}
    assert cover.within() == ("padded", "unrolled")
    assert "vec_padded" not in set(run.analysis.deltas["stage"])
    assert run.analysis.verdicts["vec_padded"].startswith("Not compared with the stage before: padded, unrolled")
    assert run.analysis.breaks == {
        "vec_padded": "padded, unrolled, the stages before it in the case, are not in this capture"}
    exp = run.analysis.expectations[run.analysis.expectations["stage"] == "vec_padded"]
    assert len(exp) and set(exp["verdict"]) == {"not measured"}
    assert "faster" not in run.analysis.verdicts["vec_padded"]


def test_render_of_a_partial_capture_names_the_gap_and_exits_5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    code, _, err = cli(monkeypatch, capsys, "render", "--from", _partial(tmp_path), "--out", out)
    assert code == 5, err
    [line] = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert "stages padded, unrolled of case transpose are not in the capture" in line
    html = (out / "index.html").read_text()  # the report is written, and says so
    assert "Stages padded, unrolled of case transpose are not in this capture" in html
    assert "largest step is vec_padded" not in html and not re.search(r"vec_padded[^<]{0,80}faster than smem", html)
    summary = json.loads((out / "summary.json").read_text())
    assert [d["stage"] for d in summary["deltas"]] == ["smem", "vec_swizzled", "vec_deep", "vec_colwalk"]


def test_stages_asks_for_the_subset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    code, _, err = cli(monkeypatch, capsys, "render", "--from", _partial(tmp_path), "--out", out, "--stages", PRESENT)
    assert code == 0, err
    assert "not in this capture" in (out / "index.html").read_text()  # still named, never a step
    code, _, err = cli(monkeypatch, capsys, "render", "--from", _partial(tmp_path), "--out", out,
                       "--stages", "naive,padded")
    assert code == 5 and "stages padded of case transpose" in err, err
    code, _, err = cli(monkeypatch, capsys, "render", "--from", _partial(tmp_path), "--out", out,
                       "--stages", "naive,padedd")
    assert code == 2 and "padedd, no stage of case transpose" in err, err


def test_a_launch_whose_range_is_lost_is_reported_not_renamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = load_run(_unresolved(tmp_path))
    roles = dict(zip(run.summary["stage"], run.summary["role"], strict=True))
    assert roles["copy"] == "ceiling" and "transpose_padded" not in roles  # the copy stays the ceiling
    assert run.analysis.coverage is not None and run.analysis.coverage.unresolved == ("transpose_padded",)
    out = tmp_path / "r"
    code, _, err = cli(monkeypatch, capsys, "render", "--from", _unresolved(tmp_path), "--out", out)
    assert code == 5 and "1 launch(es) (transpose_padded) are in no pr_transpose.<stage> range" in err, err
    assert "are in no pr_transpose.&lt;stage&gt; NVTX range" in (out / "index.html").read_text()


def test_a_whole_capture_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(monkeypatch, capsys, "render", "--from", Raw().write(tmp_path / "whole.csv"), "--out",
                       tmp_path / "r")
    assert code == 0, err  # stages the case added after this capture was made are no gap
    run = load_run(tmp_path / "whole.csv")
    assert run.analysis.coverage is not None and run.analysis.coverage.gaps == {}
