"""Launch geometry of the transpose stages (profiler_report/cases/transpose/launch.py), checked
against what ncu recorded for the same launches on the H200
(lab/results/ncu_realigned_pipelined.csv: grid size and dynamic shared memory)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from profiler_report.cases.transpose.launch import (
    dynamic_smem_bytes,
    launch_shape,
    realigned_rows_fit,
    realigned_splits,
    realigned_tail_split,
    realigned_tiles_per_block,
)
from profiler_report.model.registry import get_case

REALIGNED = next(s for s in get_case("transpose").manifest.stages if s.launch == "vec_realigned")


def _at(*targs: int):
    return replace(REALIGNED, targs=tuple(map(str, targs)))


# (configuration, rows, cols, dtype, grid, dynamic shared memory in bytes) as ncu reported them.
NCU = [((16, 8, 256, 1), 8191, 8193, "float16", 8256, 23424),
       ((16, 8, 256, 4), 8191, 8193, "float16", 2064, 46848),
       ((32, 16, 512, 1), 8191, 8193, "float32", 8256, 39680),
       ((32, 16, 512, 4), 8191, 8193, "float32", 2064, 79360),
       ((32, 32, 512, 1), 16384, 16384, "float64", 65536, 37376)]


@pytest.mark.parametrize(("cfg", "rows", "cols", "dtype", "grid", "smem"), NCU)
def test_realigned_grid_and_shared_memory_are_what_the_gpu_ran(cfg, rows, cols, dtype, grid, smem):
    st = _at(*cfg)
    assert launch_shape(st, rows, cols, dtype) == ((grid,), (cfg[2],))
    assert dynamic_smem_bytes(st, dtype) == smem


@pytest.mark.parametrize(("v", "rows"), [(8, (8, 12, 16, 20, 24, 28, 32)), (4, (8, 16, 24, 32)), (2, (16, 32))])
def test_realigned_chunk_rows_are_whole_output_pieces(v, rows):
    # The kernel's static_assert: 8 to 32 chunk rows, TRC * V a multiple of 32.
    assert [t for t in range(1, 41) if realigned_rows_fit(t, v)] == list(rows)


def test_three_arguments_are_one_tile_per_block():
    assert realigned_tiles_per_block(_at(32, 16, 512)) == 1
    assert launch_shape(_at(32, 16, 512), 8191, 8193, "float32") == launch_shape(_at(32, 16, 512, 1), 8191, 8193,
                                                                                  "float32")
    assert dynamic_smem_bytes(_at(32, 16, 512), "float32") == dynamic_smem_bytes(_at(32, 16, 512, 1), "float32")


def test_tiles_per_block_round_the_grid_up():
    # 1 x 1 tile at 1 x 1; 3 tiles (3 x 1 of 128-row tiles) at 2 a block: 2 blocks, the second with one.
    assert launch_shape(_at(32, 16, 512, 2), 1, 1, "float32")[0] == (1,)
    assert launch_shape(_at(32, 16, 512, 2), 300, 64, "float32")[0] == (2,)


@pytest.mark.parametrize(("tiles", "resident", "split"), [
    (2112, 660, 132),  # float16 4097x8191 [16,16,256] on the H200: 3.2 waves, the last 132 tiles split
    (4160, 660, 200),  # [8,16,256] there: R = 200 of a 330-block half wave
    (4160, 396, 0),    # float32 [16,32,512] there: R = 200 is more than half of 396
    (1320, 660, 0),    # whole waves: nothing to split
    (100, 660, 100),   # under half a wave: every tile
    (100, 0, 0)])
def test_the_tail_split_is_the_last_waves_remainder_up_to_half_a_wave(tiles, resident, split):
    assert realigned_tail_split(tiles, resident) == split


def test_launches_of_one_tile_a_block_and_two_passes_grow_on_the_gpu():
    # The kernel's SPLITS: TPB 1 and NT = 16 TCC; the case hands the rule to the GPU side.
    case = get_case("transpose")
    assert [realigned_splits(_at(*c)) for c in ((16, 16, 256), (32, 32, 512), (16, 8, 256), (16, 16, 512),
                                               (16, 16, 256, 2))] == [True, True, False, False, False]
    assert not realigned_splits(next(s for s in case.manifest.stages if s.launch == "vec_tuned"))
    size = {"rows": 4097, "cols": 8191}
    grows = case.launch(_at(16, 16, 256), size, "float16")
    assert grows.grid == (2112,) and grows.extra_blocks is not None and grows.extra_blocks(660) == 132
    assert case.launch(_at(16, 8, 256), size, "float16").extra_blocks is None


@pytest.mark.parametrize("case_name", ["transpose", "reduction"])
def test_a_stage_with_an_unknown_launch_kind_is_a_one_line_error(tmp_path, case_name):
    # Before, a typo in `launch` fell back to the 32x8 tile launch (and turned the tile check off).
    import shutil

    from profiler_report.errors import InputError

    case = get_case(case_name)
    shutil.copytree(case.folder, tmp_path / case_name)
    toml = tmp_path / case_name / "stages.toml"
    kind = case.manifest.stages[-1].launch
    text = toml.read_text()
    at = text.rindex(f'launch = "{kind}"')
    toml.write_text(text[:at] + f'launch = "{kind}x"' + text[at + len(f'launch = "{kind}"'):])

    class Moved(type(case)):
        @property
        def folder(self):
            return tmp_path / case_name

    with pytest.raises(InputError) as exc:
        _ = Moved().manifest
    line = exc.value.one_line()
    assert f"stage {case.manifest.stages[-1].id}: unknown launch '{kind}x'" in line
    assert f"(fix: set launch to one of {', '.join(case.launch_kinds)})" in line
    assert kind in case.launch_kinds and all(s.launch in case.launch_kinds for s in case.manifest.stages)


def test_a_side_past_an_int_is_bad_input():
    # The kernels take rows and cols as int: np.int32 overflowed inside the run.
    from profiler_report.errors import InputError
    from profiler_report.model.registry import get_case

    with pytest.raises(InputError, match=r"transpose rows must be at most 2\^31 - 1, got 2147483648"):
        get_case("transpose").size({"rows": 2**31})


def test_a_grid_past_cudas_limits_is_bad_input_naming_the_stage():
    from profiler_report.errors import InputError
    from profiler_report.model.registry import get_case

    case = get_case("transpose")
    naive = case.manifest.stage("naive")
    assert case.launch(naive, {"rows": 65535 * 32, "cols": 1}, "float32").grid == (1, 65535)
    with pytest.raises(InputError, match=r"stage naive at 2097121x1 float32 needs a grid of 1x65536 blocks"):
        case.launch(naive, {"rows": 65535 * 32 + 1, "cols": 1}, "float32")


def test_the_comparison_is_bit_for_bit_and_names_the_first_wrong_element():
    import numpy as np

    case = get_case("transpose")
    ref = np.arange(20, dtype=np.float32).reshape(4, 5)
    assert case.compare(np, ref.copy(), ref).ok
    out = ref.copy()
    out[3, 4], out[2, 1] = np.nan, -ref[2, 1]
    got = case.compare(np, out, ref)
    assert (got.ok, got.mismatches, got.first_wrong, got.expected, got.got) == (False, 2, (2, 1), "11.0", "-11.0")
