"""gate.output: JUnit XML and the atomic write."""

from __future__ import annotations

import gate_support

from profiler_report import gate

# The shared module-scoped fixtures (loaded once per test module).
regressed_run = gate_support.regressed_run
default_thresholds = gate_support.default_thresholds


def test_junit_under_missing_warn_marks_not_measured_skipped(regressed_run, default_thresholds):
    tree = gate.junit_tree(gate.check_run(default_thresholds, regressed_run), missing="warn")
    root = tree.getroot()
    assert (root.get("failures"), root.get("skipped")) == ("1", "17")  # 14 skipped + 3 not measured


def test_write_atomic_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.xml"
    gate.write_atomic(target, b"<a/>")
    assert target.read_bytes() == b"<a/>" and [p.name for p in tmp_path.iterdir()] == ["out.xml"]

