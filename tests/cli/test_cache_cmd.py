"""`profiler-report cache`: lists the result cache and clears it; `run --help` names --fresh."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from profiler_report.cli import main
from profiler_report.util.result_cache import ResultCache, cache_root


def test_cache_lists_then_clears(tmp_path: Path) -> None:
    store = ResultCache()  # the test's own folder (conftest sets $PROFILER_REPORT_CACHE)
    store.put("profile", {"case": "transpose", "stage": "smem"}, {}, {"f": b"x" * 2048}, "c0ffee123456")
    store.put("peers", {"case": "transpose"}, {})
    res = CliRunner().invoke(main, ["cache"])
    assert res.exit_code == 0, res.output
    assert f"result cache {cache_root()}: 2 entries" in res.output
    assert "profile" in res.output and "c0ffee123456" in res.output and "transpose smem" in res.output
    res = CliRunner().invoke(main, ["cache", "--clear", "--kind", "peers"])
    assert res.exit_code == 0 and "removed 1 entries" in res.output
    assert [e.kind for e in ResultCache().entries()] == ["profile"]
    assert "removed 1 entries" in CliRunner().invoke(main, ["cache", "--clear"]).output


def test_run_help_names_fresh_and_no_cache() -> None:
    out = CliRunner().invoke(main, ["run", "--help"]).output
    assert "--fresh" in out and "--no-cache" in out and "--default-configs" in out
