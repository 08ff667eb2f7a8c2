"""Captures as a ladder: several files as one, --ceiling, --stage matching nothing, --expect, and
comparability of launch shapes and work size; on the committed real H200 captures."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import F32, F32_REGRESSED, F64
from gate_support import cli

from profiler_report.analysis.run import load_run
from profiler_report.capture.model import file_labels, merge_captures
from profiler_report.errors import InputError

F32_REP, F64_REP, REG_REP = (str(d / "profile.ncu-rep") for d in (F32, F64, F32_REGRESSED))


@pytest.fixture
def alone(tmp_path):
    """The f32 capture alone in a folder: no ncu.log, no sidecars (as a capture made elsewhere)."""
    path = tmp_path / "capture.ncu-rep"
    shutil.copy(F32 / "profile.ncu-rep", path)
    return path


def test_file_labels_are_stems_or_folders(tmp_path):
    assert file_labels([tmp_path / "naive.ncu-rep", tmp_path / "smem.ncu-rep"]) == ["naive", "smem"]
    assert file_labels([tmp_path / "v1" / "profile.ncu-rep", tmp_path / "v2" / "profile.ncu-rep"]) == ["v1", "v2"]


def test_merged_captures_keep_the_order_given(f32_capture, f64_capture):
    merged = merge_captures([f64_capture, f32_capture])
    launches = merged.launches()
    assert list(launches["launch_id"]) == list(range(18))
    assert list(launches["grid"][:1]) == ["(64, 64, 1)"] and list(launches["grid"][9:10]) == ["(128, 128, 1)"]
    assert set(merged.origins.values()) == {"h200_f64_2048", "h200_f32_4096"}
    assert len(merged.source) == len(f32_capture.source) + len(f64_capture.source)
    assert merged.source["launch_id"].max() >= 9 and "One ladder from 2 captures" in merged.notes[0]


def test_several_captures_render_as_one_ladder(monkeypatch, capsys, tmp_path):
    code, _, err = cli(monkeypatch, capsys, "render", "--from", F64_REP, "--from", REG_REP, "--out", tmp_path,
                       "--stage", "f64_naive=transpose_naive", "--stage", "f64_smem=smem", "--ceiling",
                       "copy=^copy_tiled$")
    assert code == 0, err
    stages = json.loads((tmp_path / "summary.json").read_text())["stages"]
    assert [(s["stage"], s["role"]) for s in stages] == [
        ("f64_naive", "stage"), ("f64_smem", "stage"), ("copy", "ceiling"),
        ("f64_naive#2", "stage"), ("f64_smem#2", "stage"), ("copy#2", "ceiling")]
    assert stages[0]["grid"] == "(64, 64, 1)" and stages[3]["grid"] == "(128, 128, 1)"  # f64 file first


def test_a_ceiling_is_never_a_stage_nor_the_baseline(alone, monkeypatch, capsys, tmp_path):
    code, _, err = cli(monkeypatch, capsys, "render", "--from", str(alone), "--out", tmp_path, "--stage",
                       "copy=^copy_tiled$", "--stage", "naive=transpose_naive$", "--stage", "smem=transpose_smem$",
                       "--ceiling", "copy=^copy_tiled$")
    assert code == 0, err
    html = (tmp_path / "index.html").read_text()
    assert "Stage 1: naive" in html and "Stage 3" not in html and 'id="stage-copy"' not in html
    assert "slower than copy" not in html and "faster than copy" not in html
    summary = json.loads((tmp_path / "summary.json").read_text())["stages"]
    assert {s["stage"]: s["role"] for s in summary} == {"copy": "ceiling", "naive": "stage", "smem": "stage"}
    from profiler_report.report.charts import bandwidth_chart_data

    run = load_run(alone, [("naive", "transpose_naive$")], ceilings=[("copy", "^copy_tiled$")])
    bars = bandwidth_chart_data(run.summary, None)
    assert list(bars["kind"]) == ["stage", "ceiling"] and bars["gbps"].notna().all()  # the ceiling is drawn


@pytest.mark.parametrize("option", ["--stage", "--ceiling"])
def test_an_option_that_matches_nothing_names_the_closest_kernels(alone, monkeypatch, capsys, option):
    code, out, err = cli(monkeypatch, capsys, "summary", str(alone), "--stage", "naive=transpose_naive$",
                         option, "paded=transpose_paded")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{option} paded=transpose_paded matches no launch" in err
    assert "closest kernel names in the capture: transpose_padded" in err


def test_expected_effects_judged_on_a_capture_made_elsewhere(alone, tmp_path):
    expect = tmp_path / "mine.toml"
    expect.write_text('''
[[stage]]
id = "smem"
title = "my shared tile"
expect = [{ metric = "global_store_efficiency_pct", direction = "up", to = 100, text = "coalesced stores" }]

[[stage]]
id = "padded"
expect = [
  { metric = "shared_excessive_wavefronts", direction = "down", to = 0, text = "no conflicts" },
  { metric = "derived__memory_l1_wavefronts_shared_excessive", direction = "down", text = "raw metric" },
  { metric = "smsp__sass_inst_executed_op_shared_ld.sum", direction = "up", factor = 2, text = "a wrong claim" },
]
''')
    labels = [(s, f"transpose_{s}$") for s in ("naive", "smem", "padded")]
    run = load_run(alone, labels, expect=expect)
    got = {(r.stage, r.metric): r.verdict for r in run.analysis.expectations.itertuples()}
    assert got == {("smem", "global_store_efficiency_pct"): "confirmed",
                   ("padded", "shared_excessive_wavefronts"): "confirmed",
                   ("padded", "derived__memory_l1_wavefronts_shared_excessive"): "confirmed",
                   ("padded", "smsp__sass_inst_executed_op_shared_ld.sum"): "no effect"}
    assert run.analysis.stage_info["smem"].title == "my shared tile"
    expect.write_text('[[stage]]\nid = "padd"\nexpect = []\n')
    with pytest.raises(InputError) as exc:
        load_run(alone, labels, expect=expect)
    assert "stage 'padd' is not a stage" in exc.value.message and "padded" in exc.value.hint


def test_a_bad_template_in_an_expect_file_names_that_file_and_the_valid_shapes(tmp_path):
    from profiler_report.model.manifest import load_expectations

    bad = tmp_path / "mine.toml"
    bad.write_text('[[stage]]\nid = "vec_realigned"\nlaunch = "vec_realigned"\ntemplate = [32, 16, 128]\n')
    with pytest.raises(InputError) as exc:
        load_expectations(bad)
    assert exc.value.message.startswith(f"bad --expect file {bad}: stage vec_realigned: tile shape 32x16")
    assert str(bad) in exc.value.hint and "[32, 16, 512]" in exc.value.hint


@pytest.mark.parametrize(("entry", "message"), [
    ('{metric = "instructions_executed", direction = "down", factor = "x"}', "expect factor must be a number, got 'x'"),
    ('{metric = "instructions_executed", direction = "down", to = "zero"}', "expect to must be a number, got 'zero'"),
    ('{metric = 5, direction = "down"}', "expect metric and text must be strings, got 5"),
    ('{metric = "duration", direction = "sideways"}', "expect direction must be 'up' or 'down', not 'sideways'"),
])
def test_a_mistyped_expected_effect_is_one_clear_error(tmp_path, entry, message):
    from profiler_report.model.manifest import load_expectations

    bad = tmp_path / "mine.toml"
    bad.write_text(f'[[stage]]\nid = "vec_realigned"\nexpect = [{entry}]\n')
    with pytest.raises(InputError) as exc:
        load_expectations(bad)
    assert exc.value.message == f"bad --expect file {bad}: stage vec_realigned: {message}"
    assert "direction = " in exc.value.hint and str(bad) in exc.value.hint


def test_a_bad_expect_file_is_one_line(alone, tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[stage]]\ntitle = 'no id'\n")
    code, _, err = cli(monkeypatch, capsys, "render", "--from", str(alone), "--out", tmp_path / "o", "--expect",
                       str(bad))
    assert code == 2 and err.count("\n") == 1 and "bad --expect file" in err


# --------------------------------------------------------------------------------------------
# Comparability: grids, blocks, work size


def test_different_grids_and_sizes_warn_and_refuse_under_strict(monkeypatch, capsys, tmp_path):
    code, _, err = cli(monkeypatch, capsys, "diff", F32_REP, F64_REP)
    assert code == 0 and err.startswith("warning:")
    assert "grid of naive: (128, 128, 1) vs (64, 64, 1)" in err
    assert "work size (DRAM bytes read + written per launch" in err and "(0.39x)" in err
    for args in (["diff", F32_REP, F64_REP, "--strict"], ["check", F64_REP, "--baseline", F32_REP, "--strict"],
                 ["render", "--from", F64_REP, "--baseline", F32_REP, "--strict", "--out", str(tmp_path)]):
        code, _, err = cli(monkeypatch, capsys, *args)
        assert code == 2 and err.count("\n") == 1 and "grid of naive" in err, args
    assert not (tmp_path / "index.html").exists()


def test_same_shapes_are_comparable(monkeypatch, capsys):
    code, _, err = cli(monkeypatch, capsys, "diff", F32_REP, REG_REP, "--strict")
    assert code == 0 and err == ""


def test_diff_of_two_ladders(monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, "diff", "--old", F32_REP, "--new", F32_REP, "--new", REG_REP,
                         "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["new"] == f"{F32_REP} {REG_REP}"
    assert any(r["stage"] == "naive#2" and r["note"] == "stage only in new" for r in data["rows"])
    code, _, err = cli(monkeypatch, capsys, "diff", F32_REP)
    assert code == 2 and "diff takes OLD NEW" in err


def test_foreign_provenance_lists_what_the_capture_holds(alone, tmp_path):
    from profiler_report.report.build import render_capture

    render_capture(alone, tmp_path, labels=[("naive", "transpose_naive$")])
    env = (tmp_path / "index.html").read_text().split('id="environment"')[1].split("</table>")[0]
    assert "unknown" not in env and env.count("<tr>") <= 16
    for held in ("NVIDIA H200", "SMs</th><td>132", "L2 cache</th><td>60 MiB", "9 launches of 9 kernels",
                 "grid (128, 128, 1), block (32, 8, 1)", "float32 (the kernels&#39; first template argument)"):
        assert held in env, held
    assert "not in the capture</th><td>driver, CUDA runtime, Nsight Compute version" in env
    sources = (tmp_path / "index.html").read_text().split('id="sources"')[1]
    assert "event-timed median" not in sources  # no timings: no timing column on the page
