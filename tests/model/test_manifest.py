"""config: the stage manifest and run settings."""

from __future__ import annotations

import re

import pytest

from profiler_report.errors import InputError
from profiler_report.live.config import RunConfig
from profiler_report.metrics import HEADLINE_BY_NAME, TIMING_COLUMNS
from profiler_report.model.manifest import load_manifest
from profiler_report.util.resources import resource_dir


def test_manifest_stages_in_report_order():
    m = load_manifest()
    assert m.stage_ids()[:4] == ["naive", "smem", "padded", "unrolled"]
    assert m.ceiling.op == "copy"
    assert m.regression is not None


def test_expectations_name_real_columns():
    names = set(HEADLINE_BY_NAME) | {c.name for c in TIMING_COLUMNS}
    for st in load_manifest().stages:
        for e in st.expect:
            assert e.metric in names, (st.id, e.metric)


def test_resources_found():
    assert (resource_dir("kernels") / "transpose" / "transpose.cu").is_file()
    assert (resource_dir("templates") / "report.html.j2").is_file()


def test_bad_manifest(tmp_path):
    bad = tmp_path / "stages.toml"
    bad.write_text("source = \n")
    with pytest.raises(InputError):
        load_manifest(bad)


@pytest.mark.parametrize("kwargs", [{"dtype": "int8"}, {"size": {"rows": 0, "cols": 8}}, {"repeats": 5},
                                    {"clock_control": "max"}])
def test_bad_run_config(kwargs):
    with pytest.raises(InputError):
        RunConfig(**kwargs)


def _manifest_with_template(tmp_path, template: str):
    from profiler_report.util.resources import resource_dir as rd

    text = (rd("kernels") / "transpose" / "stages.toml").read_text()
    text = text.replace("template = [16, 16, 256]", f"template = {template}")
    (tmp_path / "transpose.cu").write_text((rd("kernels") / "transpose" / "transpose.cu").read_text())
    path = tmp_path / "stages.toml"
    path.write_text(text)
    return path


def test_vec_tuned_template_is_the_shape_nvrtc_compiles(tmp_path):
    m = load_manifest(_manifest_with_template(tmp_path, "[32, 16, 512]"))
    assert m.stage("vec_tuned").name_expression("float") == "transpose_vec_tuned<float,32,16,512>"


@pytest.mark.parametrize("template", ['"16,16,256"', "[16, 16]", '[16, 16, "256"]', "[16, 16, true]",
                                      "[12, 16, 256]", "[16, 16, 2048]", "[8, 8, 256]", "{a = 1}"])
def test_bad_vec_tuned_template_is_one_clear_error(tmp_path, template):
    with pytest.raises(InputError, match="stage vec_tuned: template|stage vec_tuned: tile shape"):
        load_manifest(_manifest_with_template(tmp_path, template))


def _manifest_with_peeled_template(tmp_path, template: str, stage: str = "vec_peeled"):
    """stages.toml with only ``stage``'s template (its `template =` line) replaced."""
    from profiler_report.util.resources import resource_dir as rd

    text = (rd("kernels") / "transpose" / "stages.toml").read_text()
    block = re.search(rf'\[\[stage\]\]\nid = "{stage}"\n.*?(?=\n\[\[stage\]\]|\Z)', text, re.S)
    assert block, f"stages.toml has no {stage} stage"
    new_block, n = re.subn(r"^template = .*$", f"template = {template}", block.group(0), count=1, flags=re.M)
    assert n == 1
    (tmp_path / "transpose.cu").write_text((rd("kernels") / "transpose" / "transpose.cu").read_text())
    path = tmp_path / "stages.toml"
    path.write_text(text[:block.start()] + new_block + text[block.end():])
    return path


def test_vec_peeled_template_is_the_shape_nvrtc_compiles(tmp_path):
    m = load_manifest(_manifest_with_peeled_template(tmp_path, "[32, 32, 512]"))
    assert m.stage("vec_peeled").name_expression("float") == "transpose_vec_peeled<float,32,32,512>"
    assert m.stage("vec_tuned").targs == load_manifest().stage("vec_tuned").targs  # only vec_peeled's changed


@pytest.mark.parametrize("template", ["[64, 16, 512]", "[16, 64, 512]", "[12, 16, 256]"])
def test_vec_peeled_tiles_past_32_are_one_clear_error(tmp_path, template):
    # [64, 16, 512] is a valid vec_tuned shape; vec_peeled's realignment shuffles need <= 32.
    with pytest.raises(InputError, match="stage vec_peeled: tile shape"):
        load_manifest(_manifest_with_peeled_template(tmp_path, template))


@pytest.mark.parametrize("template", ["[32, 16, 768]", "[32, 16, 128]", "[8, 16, 512]", "[32, 12, 384]",
                                      "[32, 64, 2048]"])
def test_vec_realigned_needs_a_warp_per_v_output_rows(tmp_path, template):
    # [32, 16, 768] is a valid vec_tuned shape; vec_realigned's threads must be 32 or 16 x its columns.
    with pytest.raises(InputError, match="stage vec_realigned: tile shape"):
        load_manifest(_manifest_with_peeled_template(tmp_path, template, "vec_realigned"))


@pytest.mark.parametrize("template", ["[32, 16, 256]", "[32, 32, 512]", "[32, 8, 128]", "[16, 16, 512]"])
def test_vec_realigned_takes_two_output_passes_per_warp(tmp_path, template):
    # 16 x columns threads: each warp writes its V output rows twice (the kernel's static_assert).
    m = load_manifest(_manifest_with_peeled_template(tmp_path, template, "vec_realigned"))
    assert m.stage("vec_realigned").targs == tuple(template.strip("[]").split(", "))


def test_vec_realigned_template_is_the_shape_nvrtc_compiles(tmp_path):
    m = load_manifest(_manifest_with_peeled_template(tmp_path, "[32, 8, 256]", "vec_realigned"))
    assert m.stage("vec_realigned").name_expression("float") == "transpose_vec_realigned<float,32,8,256>"


@pytest.mark.parametrize("template", ["[32, 16, 512, 2]", "[16, 8, 256, 1]", "[32, 32, 512, 8]"])
def test_vec_realigned_takes_tiles_per_block_as_a_fourth_argument(tmp_path, template):
    m = load_manifest(_manifest_with_peeled_template(tmp_path, template, "vec_realigned"))
    expected = ",".join(template.strip("[]").split(", "))
    assert m.stage("vec_realigned").name_expression("float") == f"transpose_vec_realigned<float,{expected}>"


@pytest.mark.parametrize(("template", "match"), [("[32, 16, 512, 0]", r"tiles per block \(the fourth template value\) "
                                                                     "must be 1 to 8, got 0"),
                                                 ("[32, 16, 512, 9]", "must be 1 to 8, got 9"),
                                                 ("[32, 16, 128, 2]", "tile shape 32x16 with 128 threads is not valid"),
                                                 ("[32, 16, 512, 2, 1]", "three or four integers"),
                                                 ("[32, 16, 512, true]", "three or four integers")])
def test_bad_tiles_per_block_is_one_clear_error(tmp_path, template, match):
    with pytest.raises(InputError, match=match) as exc:
        load_manifest(_manifest_with_peeled_template(tmp_path, template, "vec_realigned"))
    assert "tiles per block 1 to 8" in exc.value.one_line()


def test_vec_tuned_keeps_three_arguments(tmp_path):
    with pytest.raises(InputError, match="template must be three integers"):
        load_manifest(_manifest_with_template(tmp_path, "[16, 16, 256, 2]"))
