"""util/fmt.py: the one number-formatting policy."""

from __future__ import annotations

import math

from profiler_report.util.fmt import column_decimals, fmt, fmt_change, fmt_value, unit_text


def test_one_figure_alone():
    assert fmt(math.nan) == "not measured" and fmt(None) == "not measured" and fmt("n/a") == "n/a"
    assert fmt(65011712.0) == "65,011,712" and fmt(4.0) == "4" and fmt(4.1) == "4.10"
    assert fmt(32.36) == "32.4" and fmt(0.012345) == "0.0123" and fmt(12.5, "%") == "12.5%"
    assert fmt(1044.128, "us") == "1,044.1"  # durations are evidence: 0.1 us kept


def test_figures_side_by_side_share_their_decimals():
    # The report's old faults: "32.0" beside "4", "4.1" beside "4.11".
    d = column_decimals([32.01, 4.0, 16.0])
    assert [fmt(x, decimals=d) for x in (32.01, 4.0, 16.0)] == ["32.0", "4.0", "16.0"]
    d = column_decimals([32.36, 1.057, 4.108, 4.098])
    assert [fmt(x, decimals=d) for x in (4.108, 4.098)] == ["4.11", "4.10"]
    assert column_decimals([32.0, 4.0, 16.0]) == 0
    assert column_decimals([math.nan, None]) is None
    assert column_decimals([5.0, 3.0], "%") == 1 and column_decimals([508.4, 4049.5], "GB/s") == 0


def test_no_negative_zero():
    assert fmt_change(-0.001) == "0%" and fmt_change(0.35) == "+35%" and fmt_change(-0.12) == "-12%"
    assert fmt(-0.0001, decimals=1) == "0.0"


def test_units_are_pluralised():
    assert fmt_value(65011712.0, "wavefront") == "65,011,712 wavefronts"
    assert fmt_value(1.0, "wavefront") == "1 wavefront"
    assert unit_text("wavefront/inst", 4.1) == "wavefronts/inst" and unit_text("us", 3.0) == "us"
    assert fmt_value(12.5, "%") == "12.5%"
