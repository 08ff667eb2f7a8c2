"""gate.rules: one rule judged on one measurement (pure): exact counts, time with its spread."""

from __future__ import annotations

import pytest

from profiler_report import gate
from profiler_report.gate.grammar import parse_rule
from profiler_report.gate.rules import Band

# ---------------------------------------------------------------------------------------------
# Evaluation (pure)


def test_counts_are_gated_exactly():
    rule = parse_rule("shared_excessive_wavefronts == 0", "t")
    bad = rule.evaluate("unrolled", Band.point(16252928, "wavefront"))
    assert bad.verdict == "fail" and "16,252,928" in bad.message
    assert rule.evaluate("padded", Band.point(0, "wavefront")).verdict == "pass"
    assert rule.evaluate("padded", Band.point(1, "wavefront")).verdict == "fail"
    assert parse_rule("shared_wavefronts_per_load >= 16", "t").evaluate("s", Band.point(15.999)).verdict == "fail"


def test_not_measured_is_never_a_pass():
    rule = parse_rule("shared_excessive_wavefronts == 0", "t")
    r = rule.evaluate("padded", None, why_missing="the capture lacks it")
    assert r.verdict == "not measured" and r.message == "the capture lacks it"
    rel = parse_rule("duration < previous", "t")
    assert rel.evaluate("smem", Band(50, 49, 51, "us"), None).verdict == "not measured"
    assert gate.exit_code([r], "fail") == 1
    assert gate.exit_code([r], "warn") == 0


def test_time_fails_only_beyond_the_spread():
    rule = parse_rule("duration <= 1.10 * baseline", "t")
    base = Band(100, 98, 102, "us")  # limit: median 110, band 107.8 .. 112.2
    assert rule.evaluate("s", Band(109, 105, 113, "us"), base).verdict == "pass"
    noisy = rule.evaluate("s", Band(115, 111, 120, "us"), base)
    assert noisy.verdict == "pass" and "within the run-to-run spread" in noisy.message
    slow = rule.evaluate("s", Band(120, 113, 125, "us"), base)
    assert slow.verdict == "fail" and "beyond the run-to-run spread" in slow.message
    faster = parse_rule("duration < previous", "t")
    assert faster.evaluate("s", Band(52, 51, 53, "us"), Band(99, 98, 100, "us")).verdict == "pass"
    assert faster.evaluate("s", Band(101, 100, 102, "us"), Band(99, 98, 100.5, "us")).verdict == "pass"  # overlap
    assert faster.evaluate("s", Band(110, 108, 112, "us"), Band(99, 98, 100, "us")).verdict == "fail"
    gbps = parse_rule("event_gbps >= 0.9 * baseline", "t")
    assert gbps.evaluate("s", Band(800, 780, 820, "GB/s"), Band(1000, 990, 1010, "GB/s")).verdict == "fail"
    assert gbps.evaluate("s", Band(880, 860, 895, "GB/s"), Band(1000, 990, 1010, "GB/s")).verdict == "pass"


def test_absolute_time_limit_in_another_unit():
    rule = parse_rule("duration <= 0.04 ms", "t")
    assert rule.evaluate("s", Band(39, 38, 41, "us")).verdict == "pass"
    r = rule.evaluate("s", Band(45, 42, 47, "us"))
    assert r.verdict == "fail" and r.limit == pytest.approx(40)




def test_a_value_that_rounds_to_its_limit_is_shown_with_more_digits():
    # 15.996 sectors per request (vec_realigned's load requests in the H200 capture) reads "16.0" and
    # fails ">= 16": the message must not look like a value that passes.
    rule = parse_rule("global_load_sectors_per_request >= 16", "t")
    r = rule.evaluate("x", Band.point(15.996095, "sector/request"))
    assert r.verdict == "fail" and "(15.9961)" in r.message
    assert "(" not in rule.evaluate("x", Band.point(12.0, "sector/request")).message


def test_an_infinite_time_limit_passes_no_comparison():
    # 1e308 x a 134 us previous overflows: a timing rule fails like a count rule, never passes.
    rule = parse_rule("duration <= 1e308 * previous", "t")
    r = rule.evaluate("s", Band(134, 133, 135, "us"), Band(134e300, 133e300, 135e300, "us"))
    assert r.verdict == "fail" and r.message.endswith("not finite (an infinite value passes no comparison)")
    count = parse_rule("instructions_executed <= 1e308 * previous", "t")
    assert count.evaluate("s", Band.point(4e7, "inst"), Band.point(5e7, "inst")).verdict == "fail"
