"""scripts/bench_tool.py's parts that need no GPU: the "time spent" parser, the one-stage edit
(only the edited stage's hash changes), the table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from profiler_report.live.cache import stage_source_hash
from profiler_report.model.registry import get_case

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_tool", ROOT / "scripts" / "bench_tool.py")
assert spec is not None and spec.loader is not None
bench_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_tool)

STDERR = """[render] 4.1 s
time spent:
  sanitize        15.0 s
  build            0.0 s
  padding_sweep     9.0 s
  total           76.8 s
report: /tmp/h200/index.html
"""


def test_phases_are_the_last_time_spent_table() -> None:
    assert bench_tool.phases(STDERR) == {"sanitize": 15.0, "build": 0.0, "padding_sweep": 9.0, "total": 76.8}
    assert bench_tool.phases("no table") == {}


def test_the_edit_changes_one_stages_hash_only(tmp_path: Path) -> None:
    tree = bench_tool.edited_copy(tmp_path, "transpose")
    case = get_case("transpose")
    before = case.manifest.source_text()
    after = (tree / "kernels" / "transpose" / "transpose.cu").read_text()
    changed = [s.id for s in (*case.manifest.stages, case.manifest.ceiling)
               if stage_source_hash(before, s) != stage_source_hash(after, s)]
    assert changed == [bench_tool.EDITED["transpose"]]
    assert (tree / "profiler_report" / "cli.py").is_file() and (tree / "pyproject.toml").is_file()


def test_the_table_says_whether_each_target_is_met() -> None:
    rows = [{"run": "transpose cold", "wall_s": 75.0, "cpu_s": 60.0, "target_s": 60.0, "met": False,
             "phases": {"profile": 30.7, "total": 75.0}}]
    text = bench_tool.table(rows)
    assert "transpose cold" in text and "NO" in text and "profile 30.7" in text and "total" not in text.split("\n")[1]


def test_each_log_line_is_stamped_with_the_seconds_since_the_start() -> None:
    import io
    import time

    t0 = time.monotonic() - 2.0
    plain, stamped = bench_tool.stamp_lines(io.StringIO("[choose] ...\n[choose] 1.0 s\n"), t0)
    assert plain == "[choose] ...\n[choose] 1.0 s\n"
    first, second = stamped.splitlines()
    assert first.endswith(" [choose] ...") and 2.0 <= float(first.split()[0]) < 10.0
    assert second.endswith(" [choose] 1.0 s")
    assert bench_tool.stamp_lines(None, t0) == ("", "")
