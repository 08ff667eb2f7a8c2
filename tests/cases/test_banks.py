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
