"""ncu_module: which ncu_report reads captures (the newest; the package before a bundled copy of
the same release; the next one when an import fails)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from profiler_report.capture.ncu_module import Reader, bundled, opens, package_version, readers, version_key

ROOT = Path(__file__).resolve().parents[2]


def copy(version: str) -> Reader:
    folder = f"/opt/nvidia/nsight-compute/{version}/extras/python"
    return Reader(version, f"bundled with ncu in {folder}", folder)


def test_version_key_and_opens():
    assert version_key("Version 2025.3.1.0 (build 36398880)") == (2025, 3, 1, 0)
    assert version_key("no version") == ()
    assert opens("2026.3.1", "2025.1.0.0") and opens("2026.3.1", "2026.3.0.0")
    assert opens("2026.3.1", "2027.1.0.0") is False
    assert opens("", "2025.3.1") is None


def test_the_newest_reader_comes_first_and_the_package_wins_a_tie():
    order = readers(package="2026.3.1", copies=[copy("2025.3.1"), copy("2027.1.0"), copy("2026.3.1")])
    assert [(r.version, r.folder is None) for r in order] == [
        ("2027.1.0", False), ("2026.3.1", True), ("2026.3.1", False), ("2025.3.1", False)]


def test_without_the_package_a_bundled_copy_reads():
    assert readers(package="", copies=[copy("2025.3.1")]) == [copy("2025.3.1")]
    assert readers(package="", copies=[]) == []


def test_bundled_copies_are_found_by_their_ncu_report_py(tmp_path):
    good = tmp_path / "2026.1.0" / "extras" / "python"
    good.mkdir(parents=True)
    (good / "ncu_report.py").write_text("")
    (tmp_path / "2025.1.0" / "extras" / "python").mkdir(parents=True)  # no module: not a reader
    found = bundled(globs=[str(tmp_path / "*" / "extras" / "python")], extra=[])
    assert [(r.version, r.folder) for r in found] == [("2026.1.0", str(good))]


def test_a_copy_that_fails_to_import_falls_back_to_the_next(tmp_path):
    # A bundled copy built for another Python fails on import (test double: it raises ImportError).
    broken = tmp_path / "2099.1.0" / "extras" / "python"
    broken.mkdir(parents=True)
    (broken / "ncu_report.py").write_text("raise ImportError('built for another Python')\n")
    probe = ("import json, profiler_report.capture.ncu_module as m\n"
             f"m.BUNDLED_GLOBS = ({str(tmp_path / '*' / 'extras' / 'python')!r},)\n"
             "print(json.dumps([r.version for r in m.readers()]))\n"
             "mod, reader = m.load_reader()\n"
             "print(json.dumps([reader.version, reader.origin, hasattr(mod, 'load_report')]))\n")
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
    order, loaded = (json.loads(line) for line in res.stdout.splitlines())
    assert order[0] == "2099.1.0"  # tried first, as the newest
    assert loaded == [package_version(), "ncu-report package", True]
