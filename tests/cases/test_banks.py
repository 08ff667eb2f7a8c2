"""cases.transpose.banks: the bank model against the closed forms, worked case by case."""

from __future__ import annotations

import math

import pytest

from profiler_report.cases.transpose.banks import column_read, row_store, wavefronts


@pytest.mark.parametrize("pad", range(5))
def test_four_byte_full_warp_is_gcd_of_the_pitch(pad):
    # bx 32: thread tx reads word tx * P, so gcd(P, 32) threads share each bank used.
    acc = column_read(pad, 4, 32)
    assert acc.wavefronts == math.gcd(32 + pad, 32)
    assert acc.ideal == 1
    assert len({b for (b,) in acc.banks}) == 32 // math.gcd(32 + pad, 32)


@pytest.mark.parametrize("pad", range(5))
def test_eight_byte_full_warp_is_twice_gcd_of_the_pitch_and_16(pad):
    acc = column_read(pad, 8, 32)
    assert acc.wavefronts == 2 * math.gcd(32 + pad, 16)
    assert acc.ideal == 2
    assert acc.degree == math.gcd(32 + pad, 16)


@pytest.mark.parametrize(("pad", "elem", "expected"), [
    (0, 4, 32), (1, 4, 1), (2, 4, 2), (3, 4, 1), (4, 4, 4),
    (0, 8, 32), (1, 8, 2), (2, 8, 4), (3, 8, 2), (4, 8, 8),
])
def test_worked_cases_of_the_docstring_full_warp(pad, elem, expected):
    assert column_read(pad, elem, 32).wavefronts == expected


@pytest.mark.parametrize(("pad", "elem", "expected"), [
    (0, 4, 16), (1, 4, 2), (2, 4, 1), (3, 4, 2), (4, 4, 2), (1, 8, 2), (0, 8, 16),
])
def test_half_warp_rows_worked_cases(pad, elem, expected):
    # bx 16: a warp spans two rows of threads; [32][33] is no longer conflict-free for 4 bytes.
    assert column_read(pad, elem, 16).wavefronts == expected


def test_one_element_pad_fails_only_when_a_warp_spans_two_rows():
    assert column_read(1, 4, 32).degree == 1
    assert column_read(1, 4, 16).degree == 2


@pytest.mark.parametrize("pad", range(5))
def test_row_store_is_conflict_free_for_full_warp_rows(pad):
    assert row_store(pad, 4, 32).wavefronts == 1
    assert row_store(pad, 8, 32).wavefronts == 2


@pytest.mark.parametrize("pad", range(5))
def test_row_store_of_half_warp_rows_conflicts_two_ways(pad):
    assert row_store(pad, 4, 16).wavefronts == 2


def test_broadcast_counts_one_word_once():
    # Every lane reading the same word: one wavefront, no conflict.
    assert wavefronts([(7,)] * 32) == (1, 1)
    # Two different words in one bank: two wavefronts.
    assert wavefronts([(0,), (32,)]) == (2, 1)


def test_lanes_per_bank_of_the_conflicting_tile():
    acc = column_read(0, 4, 32)
    assert acc.lanes_per_bank() == {0: list(range(32))}


def test_unknown_shapes_are_refused():
    with pytest.raises(ValueError):
        column_read(1, 2, 32)
    with pytest.raises(ValueError):
        column_read(1, 4, 24)


def _map(stage):
    from profiler_report.model.registry import get_case

    return next(m for m in get_case("transpose").bank_maps("float32") if m["stage"] == stage)


def test_the_bank_map_plots_the_tile_the_read_and_the_lanes_per_bank():
    from profiler_report.report.bank_map import bank_map_data

    flat, padded = bank_map_data(_map("smem"), 32.4), bank_map_data(_map("padded"), 1.0)
    # The tile: 32 rows of 32 (33) words, each word coloured by its bank (address % 32).
    assert (len(flat.bank), len(flat.bank[0]), len(padded.bank[0])) == (32, 32, 33)
    assert padded.bank[1][0] == 33 % 32 and flat.bank[1][0] == 0
    # One warp's column read: word 0 of every row, outlined.
    assert flat.read == tuple((r, 0) for r in range(32)) == padded.read
    # Lanes per bank: all 32 in bank 0 unpadded (a 32-way conflict), one in each padded.
    assert flat.lanes_per_bank == (32,) + (0,) * 31 and padded.lanes_per_bank == (1,) * 32
    assert {flat.bank[r][c] for r, c in flat.read} == {0}
    assert {padded.bank[r][c] for r, c in padded.read} == set(range(32))


def test_an_eight_byte_tile_reads_two_words_a_lane():
    from profiler_report.model.registry import get_case
    from profiler_report.report.bank_map import bank_map_data

    spec = next(m for m in get_case("transpose").bank_maps("float64") if m["stage"] == "padded")
    data = bank_map_data(spec)
    assert len(data.bank[0]) == 66 and len(data.read) == 64 and data.wavefronts == data.ideal == 2
    assert sum(data.lanes_per_bank) == 64  # each lane's two words sit in two banks


def test_the_unpadded_and_padded_tiles_are_drawn_side_by_side():
    from profiler_report.report.bank_map import draw_bank_maps

    svg = draw_bank_maps([_map("smem"), _map("padded")], [32.36, 1.06])
    assert svg.startswith("<svg") and "tile[32][32]" in svg and "tile[32][33]" in svg
    assert "measured 32.36" in svg and "per bank" in svg


def test_the_reduction_maps_its_strided_and_sequential_first_steps():
    from profiler_report.model.registry import get_case
    from profiler_report.report.bank_map import bank_map_data

    strided, sequential = (bank_map_data(m) for m in get_case("reduction").bank_maps("float32"))
    assert strided.wavefronts == 2 and strided.lanes_per_bank == (2, 0) * 16  # words 2t: even banks, 2 lanes each
    assert sequential.wavefronts == 1 and sequential.lanes_per_bank == (1,) * 32
    assert len(strided.bank) == 8 and strided.read[:2] == ((0, 0), (0, 2))
    assert sequential.read[0] == (4, 0)  # word 128 of sdata[256]: row 4
    assert get_case("reduction").bank_maps("float64") == []
