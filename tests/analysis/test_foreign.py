"""Captures the tool did not make: cuda-samples style transpose kernels profiled with ncu directly
(tests/data/foreign/, written by scripts/record_foreign.sh on the H200; see its README.md).
These tests skip while the files are absent and must pass once they are committed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_support import cli

from profiler_report.analysis.attribution import attribution
from profiler_report.analysis.run import load_run

FOREIGN = Path(__file__).parents[1] / "data" / "foreign"
ALL_4096, ALL_8192 = FOREIGN / "all_4096.ncu-rep", FOREIGN / "all_8192.ncu-rep"
LADDER = [FOREIGN / "ladder" / f"{k}.ncu-rep" for k in ("naive", "coalesced", "conflict_free", "copy")]
pytestmark = pytest.mark.skipif(not all(p.is_file() for p in (ALL_4096, ALL_8192, *LADDER)),
                                reason="tests/data/foreign/ not recorded yet (bash scripts/record_foreign.sh on a GPU)")
CEILING = ("--ceiling", "copy=^copy$")


def test_the_reference_copy_is_a_ceiling_not_the_baseline(monkeypatch, capsys, tmp_path):
    code, _, err = cli(monkeypatch, capsys, "render", "--from", ALL_4096, "--out", tmp_path, *CEILING)
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())["stages"]
    assert [(s["stage"], s["role"]) for s in summary] == [
        ("copy", "ceiling"), ("transposeNaive", "stage"), ("transposeCoalesced", "stage"),
        ("transposeNoBankConflicts", "stage")]
    html = (tmp_path / "index.html").read_text()
    assert "Stage 1: transposeNaive" in html and "than copy" not in html
    assert html.count("Bandwidth against the ceilings") == 3


def test_a_ladder_of_one_capture_per_version_is_one_report(monkeypatch, capsys, tmp_path):
    args = [a for p in LADDER for a in ("--from", p)]
    code, _, err = cli(monkeypatch, capsys, "render", *args, "--out", tmp_path, *CEILING)
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())["stages"]
    assert [(s["stage"], s["role"]) for s in summary] == [
        ("naive", "stage"), ("coalesced", "stage"), ("conflict_free", "stage"), ("copy", "ceiling")]
    by = {s["stage"]: s for s in summary}
    assert by["coalesced"]["global_store_efficiency_pct"] == 100 > by["naive"]["global_store_efficiency_pct"]
    assert by["coalesced"]["shared_excessive_wavefronts"] > 0 == by["conflict_free"]["shared_excessive_wavefronts"]
    code, out, _ = cli(monkeypatch, capsys, "summary", *LADDER, *CEILING)
    assert code == 0 and out.splitlines()[1].startswith("naive,stage,transposeNaive")


def test_expected_effects_of_a_user_on_the_ladder(tmp_path):
    expect = tmp_path / "stages.toml"
    expect.write_text('''
[[stage]]
id = "coalesced"
expect = [{ metric = "global_store_sectors_per_request", direction = "down", factor = 4, text = "coalesced stores" }]

[[stage]]
id = "conflict_free"
expect = [{ metric = "shared_excessive_wavefronts", direction = "down", to = 0, text = "the pad removes them" }]
''')
    run = load_run(LADDER, ceilings=[("copy", "^copy$")], expect=expect)
    assert set(run.analysis.expectations["verdict"]) == {"confirmed"}


def test_the_naive_store_is_where_the_code_is_uncoalesced():
    run = load_run(ALL_4096, ceilings=[("copy", "^copy$")])
    naive = run.summary.set_index("stage").loc["transposeNaive", "launch_id"]
    rows, note = attribution(run.capture, int(naive), None)
    assert rows[0]["ranked_by"] == "global" and "STG" in rows[0]["sass"].split(" / ")[0]
    assert "odata[(size_t)x * n + (y + j)]" in rows[0]["line_text"]  # ncu imported the source (--import-source)
    assert "with the source text the capture embeds" in note


def test_a_size_mismatch_warns_and_refuses_under_strict(monkeypatch, capsys, tmp_path):
    code, _, err = cli(monkeypatch, capsys, "diff", ALL_4096, ALL_8192, *CEILING)
    assert code == 0 and "grid of transposeNaive: (128, 128, 1) vs (256, 256, 1)" in err
    assert "work size (DRAM bytes read + written per launch" in err
    rules = tmp_path / "thresholds.toml"
    rules.write_text('version = 1\n[kernel."."]\nrules = ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum >= 0"]\n')
    for args in (["diff", ALL_4096, ALL_8192, "--strict"],
                 ["check", ALL_8192, "--baseline", ALL_4096, "--strict", "--thresholds", rules],
                 ["render", "--from", ALL_8192, "--baseline", ALL_4096, "--strict", "--out", tmp_path]):
        code, _, err = cli(monkeypatch, capsys, *args)
        assert code == 2 and "(128, 128, 1) vs (256, 256, 1)" in err, args


def test_provenance_says_what_the_capture_cannot(tmp_path):
    from profiler_report.report.build import render_capture

    render_capture(ALL_4096, tmp_path, ceilings=[("copy", "^copy$")])
    env = (tmp_path / "index.html").read_text().split('id="environment"')[1].split("</table>")[0]
    assert "unknown" not in env and "not in the capture</th><td>driver" in env and "4 launches of 4 kernels" in env
