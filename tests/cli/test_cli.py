"""cli: summary and render on real captures, through the console entry point."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from conftest import F32

CLI = [sys.executable, "-m", "profiler_report"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_summary_csv_from_ncu_rep():
    res = run("summary", str(F32 / "profile.ncu-rep"), "--format", "csv")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    header = lines[0].split(",")
    for col in ("shared_excessive_wavefronts", "global_load_efficiency_pct", "global_store_efficiency_pct",
                "duration_us"):
        assert col in header
    assert [ln.split(",")[0] for ln in lines[1:]] == ["naive", "smem", "padded", "unrolled", "vec_padded",
                                                      "vec_swizzled", "vec_deep", "vec_colwalk", "copy"]


def test_summary_json_from_csv_export():
    res = run("summary", str(F32 / "raw.csv"), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "profiler-report.summary/2"
    assert set(doc) == {"schema", "columns", "stages", "expectations", "deltas", "sanitizer", "assessment"}
    assert doc["sanitizer"] == {"result": "not run"}  # a CSV export has no sanitizer.json beside it
    rows = doc["stages"]
    assert rows[0]["stage"] == "naive"
    assert rows[0]["global_store_efficiency_pct"] == 12.5
    assert doc["columns"]["global_store_efficiency_pct"]["unit"] == "%"
    assert doc["columns"]["shared_excessive_wavefronts_ld"]["unit"] == "wavefront"


def test_summary_markdown_is_the_reports_summary_table():
    res = run("summary", str(F32 / "profile.ncu-rep"), "--format", "markdown")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"### profiler-report summary: `{F32 / 'profile.ncu-rep'}`")
    rows = [[c.strip() for c in line.strip().split("|")[1:-1]] for line in res.stdout.splitlines()
            if line.startswith("|")]
    header, stages = rows[0], rows[2:]
    assert header[0] == "stage" and header[-1] == "verdict" and "global store efficiency (%)" in header
    assert [r[0] for r in stages] == ["**naive**", "**smem**", "**padded**", "**unrolled**", "**vec_padded**",
                                      "**vec_swizzled**", "**vec_deep**", "**vec_colwalk**", "_copy_"]
    assert all(len(r) == len(header) for r in rows)
    naive = dict(zip(header, stages[0], strict=True))
    assert naive["global store efficiency (%)"] == "12.5%"
    assert naive["shared wavefronts per load (wavefront/inst)"] == "n/a"  # no shared loads: as on the page


def test_render_any_capture_with_stage_labels(tmp_path):
    res = run("render", "--from", str(F32 / "profile.ncu-rep"), "--out", str(tmp_path),
              "--stage", "slow=transpose_naive$", "--stage", "fast=transpose_vec_swizzled")
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "index.html").read_text()
    assert 'id="stage-slow"' in html and 'id="stage-fast"' in html
    assert "source not available" in html


def test_help_lists_exit_codes():
    res = run("--help")
    assert res.returncode == 0
    assert "Exit codes" in res.stdout
    for cmd in ("run", "render", "summary"):
        assert run(cmd, "--help").returncode == 0


def test_render_prints_where_its_time_went(tmp_path):
    res = run("render", "--from", str(F32 / "profile.ncu-rep"), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [f"wrote {tmp_path / name}" for name in ("index.html", "summary.csv",
                                                                               "summary.json")]
    lines = res.stderr.strip().splitlines()
    assert lines[0] == "time spent:"
    steps = [re.match(r"^  (\S+)\s+(\d+\.\d) s$", ln) for ln in lines[1:]]
    assert all(steps), res.stderr
    assert [m.group(1) for m in steps] == ["import", "read", "page", "write", "total"]
    assert float(steps[-1].group(2)) > 0
    # One schema for "summary": the report's summary.json is what `summary --format json` prints.
    printed = run("summary", str(F32 / "profile.ncu-rep"), "--format", "json")
    assert json.loads(printed.stdout) == json.loads((tmp_path / "summary.json").read_text())


def test_bench_prints_the_block_shape_verdicts_the_report_shows():
    # `bench` and the report word the sweep's fastest-against-chosen verdict (and where a peer
    # still wins) with the same code.
    import json
    from pathlib import Path

    from profiler_report.cases.transpose.bench import TransposeRow
    from profiler_report.live.sweeps import shape_lines as _shape_lines

    sweep = Path(__file__).resolve().parents[2] / "reports" / "h200" / "sweep.json"
    rows = [TransposeRow.from_dict(r) for r in json.loads(sweep.read_text())["rows"]]
    from profiler_report.analysis.sweeps import sweep_table, sweep_verdicts

    lines = _shape_lines(rows).splitlines()
    shape_lines = [line for line in lines if line.startswith("block-shape sweep ")]
    assert len(shape_lines) == 4 and all("fastest [" in line for line in shape_lines)
    # ... and the size sweep's where-a-peer-wins lines, after them.
    sweep = [f"sweep: {v}" for v in sweep_verdicts(sweep_table([r.to_dict() for r in rows]))]
    assert sweep and lines == shape_lines + sweep
    assert _shape_lines([r for r in rows if r.kind != "shape"]).splitlines() == sweep
    assert _shape_lines([r for r in rows if r.kind == "shape"]).splitlines() == shape_lines
