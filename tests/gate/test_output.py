"""gate.output: JUnit XML and the atomic write."""

from __future__ import annotations

from profiler_report import gate


def test_junit_under_missing_warn_marks_not_measured_skipped(regressed_run, default_thresholds):
    tree = gate.junit_tree(gate.check_run(default_thresholds, regressed_run), missing="warn")
    root = tree.getroot()
    assert (root.get("failures"), root.get("skipped")) == ("1", "24")  # 21 skipped + 3 not measured


def test_write_atomic_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.xml"
    gate.write_atomic(target, b"<a/>")
    assert target.read_bytes() == b"<a/>" and [p.name for p in tmp_path.iterdir()] == ["out.xml"]



def _md_rows(text: str) -> list[list[str]]:
    """The cells of every table row of a GitHub-flavoured Markdown text (escaped pipes kept)."""
    import re

    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            for line in text.splitlines() if line.startswith("|")]


def test_markdown_names_the_failure_and_has_a_row_per_rule(regressed_run, default_thresholds):
    results = gate.check_run(default_thresholds, regressed_run)
    text = gate.results_markdown(results, "warn", "R.ncu-rep", "thresholds.toml")
    assert text.startswith("### profiler-report check: FAILED\n")
    assert "`R.ncu-rep` against `thresholds.toml`: 7 passed, 1 failed, 3 not measured, 21 skipped" in text
    rows = _md_rows(text)
    assert rows[0] == ["stage", "rule", "measured", "limit", "verdict", "why"]
    assert rows[1] == ["---", "---", "---:", "---:", "---", "---"]
    assert len(rows) == 2 + len(results) and all(len(r) == 6 for r in rows)
    failed = [r for r in rows if r[4] == "**FAIL**"]
    assert [(r[0], r[1]) for r in failed] == [("unrolled", "`shared_excessive_wavefronts == 0`")]
    assert "16,252,928" in failed[0][2] and failed[0][5]  # measured, and why it failed


def test_markdown_passes_when_only_warnings_remain(good_run, default_thresholds):
    results = gate.check_run(default_thresholds, good_run)
    assert gate.results_markdown(results, "warn", "G", "T").startswith("### profiler-report check: passed")
    assert gate.results_markdown(results, "fail", "G", "T").startswith("### profiler-report check: FAILED")


def test_markdown_cells_escape_pipes_and_fold_lines():
    from profiler_report.util.fmt import markdown_table

    table = markdown_table(["a", "b"], [["x|y", "one\ntwo"]], ["l", "r"])
    assert table.splitlines() == ["| a | b |", "| --- | ---: |", "| x\\|y | one two |"]
