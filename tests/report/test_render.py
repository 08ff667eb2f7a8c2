"""render: the HTML report of a real capture, its chart data and its outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from profiler_report.analysis.sweeps import shape_table, shape_verdicts, stage_label, sweep_table, sweep_verdicts
from profiler_report.report.chart_pool import ChartPool
from profiler_report.report.charts import (
    CEILING,
    HIGHLIGHT,
    PEER,
    bandwidth_chart_data,
    bandwidth_charts,
    capture_chart_jobs,
    chart_jobs,
    draw_bandwidth,
    draw_here,
    scope_ids,
    sidecar_chart_jobs,
    stall_chart_data,
    sweep_grid,
)
from profiler_report.report.charts import STAGE as STAGE_COLOR
from profiler_report.report.diff import code_diff_html
from profiler_report.report.html import has_placeholder, render_html, write_outputs
from profiler_report.report.page import PageInputs, build_page
from profiler_report.report.tables import bench_rows

STAGES = ["naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk"]
PROV = {"mode": "recorded capture", "gpu": "NVIDIA H200", "clock_control": "none"}


def inputs_of(analysis, prov, manifest=None, **inputs):
    """PageInputs of the transpose case's capture (``manifest`` given) or of a foreign one."""
    from profiler_report.analysis.story import tell
    from profiler_report.capture.sidecars import Sidecars
    from profiler_report.model.registry import get_case

    case = get_case("transpose") if manifest is not None else None
    side = Sidecars(timings=inputs.get("timings"), bench=inputs.get("bench"), sweep=inputs.get("sweep"))
    story = tell(analysis, case, side=side)
    return PageInputs(analysis, prov, story, case, **inputs)


def build(analysis, prov, manifest=None, charts=True, **inputs):
    """build_page of the transpose case's capture (``manifest`` given) or of a foreign one."""
    inp = inputs_of(analysis, prov, manifest, **inputs)
    jobs = chart_jobs(analysis, inp.timings, inp.bench, inp.sweep)
    return build_page(inp, (lambda: draw_here(jobs)) if charts else None)


@pytest.fixture(scope="module")
def html(f32_analysis, manifest):
    return render_html(build(f32_analysis, PROV, manifest))


def test_every_stage_has_a_section_in_order(html):
    positions = [html.index(f'id="stage-{s}"') for s in STAGES]
    assert positions == sorted(positions)


def test_no_unfilled_placeholder(html):
    assert not has_placeholder(html)
    assert "Undefined" not in html


def test_no_external_request(html):
    # Nothing fetched: no src/href to another host, no CSS import or url() to one.
    assert not re.search(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//', html, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", html, re.I)
    assert "<script" not in html.lower()
    assert "<link" not in html.lower()


def test_recorded_capture_is_labelled(html):
    assert "Recorded capture" in html
    assert "Live run" not in html


def test_environment_and_sources(html):
    assert "NVIDIA H200" in html
    assert "derived__memory_l1_wavefronts_shared_excessive" in html
    assert "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio" in html


def test_stage_sections_show_numbers_and_verdicts(html, f32_analysis):
    assert f32_analysis.verdicts["smem"] in html.replace("&gt;", ">")
    assert "16,252,928" in html  # smem excessive shared wavefronts
    assert "confirmed" in html
    # The overview chart once (no per-stage copy of it), a stall chart per stage, the roofline
    # (the memory roofs: no launch of the transpose does floating-point work).
    assert html.count("<svg") == 1 + len(STAGES) + 1


def test_bandwidth_chart_data_without_timings(f32_analysis):
    data = bandwidth_chart_data(f32_analysis.summary, None)
    assert list(data["label"]) == [*STAGES, "copy"]
    assert list(data["kind"]) == ["stage"] * len(STAGES) + ["ceiling"]
    assert set(data["source"]) == {"ncu DRAM throughput"}
    assert data["gbps"].iloc[: len(STAGES)].is_monotonic_increasing


def test_bandwidth_chart_data_with_timings(f32_analysis):
    from profiler_report.analysis.summary import add_timings

    timings = [{"name": "memcpy", "median_us": 35.0, "p10_us": 34.0, "p90_us": 36.0, "gbps": 3800.0},
               {"name": "naive", "median_us": 280.0, "p10_us": 279.0, "p90_us": 281.0, "gbps": 480.0}]
    summary = add_timings(f32_analysis.summary, timings)
    data = bandwidth_chart_data(summary, timings)
    assert data.iloc[-1].to_dict()["label"] == "memcpy"
    assert data.iloc[0]["gbps"] == 480.0
    assert summary.iloc[0]["pct_of_memcpy"] == pytest.approx(100 * 480 / 3800)


def test_stall_chart_data(f32_analysis):
    data = stall_chart_data(f32_analysis.stalls, "naive", top=3)
    assert len(data) == 3
    assert data.iloc[0]["reason"] == "long_scoreboard"
    assert data["cycles_per_issue"].is_monotonic_decreasing


def test_code_diff_shows_the_one_change(manifest):
    from profiler_report.model.manifest import stage_sources

    src = stage_sources(manifest.source_text())
    html = code_diff_html(src["smem"], src["padded"], "smem", "padded")
    assert "TILE + 1" in html
    assert html.count("TILE + 1") == 1


def test_outputs_written(tmp_path, f32_analysis, manifest):
    page = build(f32_analysis, PROV, manifest, charts=False)
    files = write_outputs(tmp_path, page, f32_analysis)
    assert [f.name for f in files] == ["index.html", "summary.csv", "summary.json"]
    data = json.loads((tmp_path / "summary.json").read_text())
    assert [s["stage"] for s in data["stages"]] == [*STAGES, "copy"]
    assert data["columns"]["global_store_efficiency_pct"]["unit"] == "%"
    assert not list(tmp_path.glob(".*.tmp"))


# --------------------------------------------------------------------------------------------
# Charts: one bandwidth drawing recoloured per stage, ids unique on the page, drawn in a pool


def _fills_by_bar(svg: str) -> dict[str, str]:
    """bar group id -> its fill colour."""
    return dict(re.findall(r'<g id="(bar-\d+)">\s*<path [^>]*?style="fill: (#[0-9a-f]{6})', svg))


def test_each_stage_chart_has_exactly_its_own_bar_highlighted(f32_analysis):
    data = bandwidth_chart_data(f32_analysis.summary, None)
    charts = bandwidth_charts(data, [None, *STAGES])
    overview = _fills_by_bar(charts[None])
    assert list(overview.values()) == [HIGHLIGHT] * len(STAGES) + [CEILING]
    for i, stage in enumerate(STAGES):
        fills = _fills_by_bar(charts[stage])
        assert [bar for bar, fill in fills.items() if fill == HIGHLIGHT] == [f"bar-{i}"], stage
        assert list(fills.values()).count(STAGE_COLOR) == len(STAGES) - 1
        assert charts[stage].count(HIGHLIGHT) == 1  # no other element of the chart has the colour
        assert draw_bandwidth(data, stage) == charts[stage]


def test_peers_keep_their_colour_when_recoloured():
    data = pd.DataFrame([{"label": "smem", "gbps": 2000.0, "kind": "stage", "source": "CUDA events"},
                         {"label": "torch", "gbps": 3000.0, "kind": "stage-other", "source": "CUDA events"},
                         {"label": "memcpy", "gbps": 4000.0, "kind": "ceiling", "source": "CUDA events"}])
    assert list(_fills_by_bar(draw_bandwidth(data, "torch")).values()) == [STAGE_COLOR, PEER, CEILING]


def test_no_id_repeats_on_the_page(html):
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) > 100
    assert len(ids) == len(set(ids))
    svgs = "".join(re.findall(r"<svg.*?</svg>", html, flags=re.S))
    refs = set(re.findall(r'(?:url\(#|href="#)([^")]+)', svgs))
    assert refs and refs <= set(ids)  # every reference in a chart still finds its target


def test_scope_ids_prefixes_ids_and_references():
    svg = '<g id="a"><clipPath id="p1"/><path clip-path="url(#p1)"/><use xlink:href="#m2"/></g>'
    assert scope_ids(svg, "x-") == ('<g id="x-a"><clipPath id="x-p1"/><path clip-path="url(#x-p1)"/>'
                                    '<use xlink:href="#x-m2"/></g>')


#: Forking after numpy started OpenBLAS's threads: safe (it stops them at fork), see render.ChartPool.
FORK_WITH_THREADS = "ignore:This process .* is multi-threaded, use of fork:DeprecationWarning"


@pytest.mark.filterwarnings(FORK_WITH_THREADS)
def test_a_chart_pool_draws_what_this_process_draws(f32_analysis):
    jobs = capture_chart_jobs(f32_analysis)
    assert set(jobs) == {"bandwidth", "roofline", *(f"stalls:{s}" for s in STAGES)}
    with ChartPool(1) as serial, ChartPool(3) as pool:
        assert pool.draw(jobs)() == serial.draw(jobs)()


@pytest.mark.filterwarnings(FORK_WITH_THREADS)
def test_page_charts_drawn_in_a_pool_equal_those_drawn_here(f32_analysis, manifest):
    here = build(f32_analysis, PROV, manifest)
    with ChartPool(2) as pool:
        pooled = build_page(inputs_of(f32_analysis, PROV, manifest),
                            pool.draw({**sidecar_chart_jobs(), **capture_chart_jobs(f32_analysis)}))
    assert render_html(pooled) == render_html(here)


def _slow_then(value: str) -> str:
    import time

    time.sleep(0.3)
    return value


@pytest.mark.filterwarnings(FORK_WITH_THREADS)
@pytest.mark.parametrize("workers", [1, 2])
def test_charts_drawn_lazily_are_taken_one_by_one(workers):
    with ChartPool(workers) as pool:
        first = pool.draw_lazily({"a": (str.upper, ("a",)), "slow": (_slow_then, ("s",))})
        second = pool.draw_lazily({"b": (str.upper, ("b",))})
        got = first() | second()
        assert "slow" in got and "c" not in got and len(got) == 3  # asked without waiting
        assert got["a"] == "A" and got.get("c") is None
        assert got == {"a": "A", "slow": "s", "b": "B"}


# ---------------------------------------------------------------------------------------------
# Peers and sweeps, from the committed live H200 run (reports/h200/bench.json and sweep.json,
# written by `profiler-report bench` and `make report` there).

H200 = Path(__file__).resolve().parents[2] / "reports" / "h200"


@pytest.fixture(scope="module")
def h200_sweep():
    return json.loads((H200 / "sweep.json").read_text())["rows"]


def test_peers_table_gives_the_ratio_to_the_fastest_peer_at_the_same_size(h200_sweep):
    rows = bench_rows(h200_sweep)
    by_size: dict = {}
    for src, row in zip(h200_sweep, rows, strict=True):
        by_size.setdefault((src["rows"], src["cols"], src["dtype"]), []).append((src, row))
    headline = by_size[(8192, 8192, "float32")]
    peers = [(s, r) for s, r in headline if s["kind"] == "peer" and s["gbps"] == s["gbps"]]
    fastest = max(peers, key=lambda p: p[0]["gbps"])
    assert fastest[1]["vs_best_peer"] == "1.000x"
    stage = next((s, r) for s, r in headline if s["name"] == "naive")
    assert float(stage[1]["vs_best_peer"].rstrip("x")) == pytest.approx(stage[0]["gbps"] / fastest[0]["gbps"], abs=1e-3)
    # Every point of the sweep timed its own peers: each ratio is against the fastest peer there.
    for pairs in by_size.values():
        timed = [s["gbps"] for s, _ in pairs if s["kind"] == "peer" and s["gbps"] == s["gbps"]]
        for s, r in pairs:
            if timed and s["kind"] == "stage" and s["gbps"] == s["gbps"]:
                assert float(r["vs_best_peer"].rstrip("x")) == pytest.approx(s["gbps"] / max(timed), abs=1e-3)


def test_shape_table_marks_the_chosen_and_the_fastest_shape(h200_sweep, manifest):
    table = shape_table(h200_sweep)
    tuned = next(s for s in manifest.stages if s.launch == "vec_tuned")
    assert len(table) > 40
    for (_dtype, _size), grp in table.groupby(["dtype", "size"]):
        # Ties are all marked (the sweep of 2026-12-01 has two shapes at the same median, 132.72 us).
        assert grp["fastest"].sum() >= 1 and (grp.loc[grp["fastest"], "gbps"] == grp["gbps"].max()).all()
        chosen = grp[grp["chosen"]]
        assert list(chosen["shape"]) == [f"[{','.join(tuned.targs)}]"]
        best = grp.loc[grp["gbps"].idxmax()]
        assert bool(best["fastest"])
    verdicts = shape_verdicts(table)
    assert len(verdicts) == table.groupby(["dtype", "size"]).ngroups
    assert all("fastest [" in v for v in verdicts)


def test_shape_verdict_says_when_the_chosen_shape_is_slower_beyond_the_spread():
    rows = [{"kind": "shape", "name": f"vec_tuned [{s}]", "rows": 64, "cols": 64, "dtype": "float32",
             "gbps": g, "pct_of_memcpy": g / 10, "median_us": 1e3 / g, "p10_us": 1e3 / g - 0.01,
             "p90_us": 1e3 / g + 0.01, "tile": "", "threads": 256, "per_thread": 1, "chosen": s == "16,16,256"}
            for s, g in (("16,16,256", 900.0), ("32,16,512", 950.0))]
    (verdict,) = shape_verdicts(shape_table(rows))
    assert "slower beyond the spread" in verdict and "stages.toml" in verdict
    rows[1]["p90_us"] = rows[0]["p10_us"] + 1  # overlapping spreads: no call to change it
    (verdict,) = shape_verdicts(shape_table(rows))
    assert "within the spread" in verdict


def test_report_has_a_block_shape_section_when_the_sweep_has_shapes(f32_analysis, manifest, h200_sweep):
    page = build(f32_analysis, PROV, manifest, sweep=h200_sweep)
    text = render_html(page)
    assert 'id="shapes"' in text and page.section("shapes").svg.startswith("<svg")
    assert text.count("chosen") >= len(page.section("shapes").verdicts)
    no_shapes = render_html(build(f32_analysis, PROV, manifest, charts=False,
                                       sweep=[r for r in h200_sweep if r["kind"] != "shape"]))
    assert 'id="shapes"' not in no_shapes


def test_sweep_table_sets_the_best_stage_against_the_fastest_peer_at_each_size(h200_sweep):
    table = sweep_table(h200_sweep).set_index(["dtype", "size"])
    for (dtype, size), row in table.iterrows():
        at = [r for r in h200_sweep if r["dtype"] == dtype and f"{r['rows']}x{r['cols']}" == size]
        peers = [r for r in at if r["kind"] == "peer" and r["gbps"] == r["gbps"]]
        if not peers:
            assert row["best_peer"] == "" and pd.isna(row["vs_peer"])
            continue
        fastest = max(peers, key=lambda r: r["gbps"])
        assert row["best_peer"] == fastest["name"]
        assert row["vs_peer"] == pytest.approx(row["gbps"] / fastest["gbps"])
    with_peers = {(r["dtype"], f"{r['rows']}x{r['cols']}") for r in h200_sweep
                  if r["kind"] == "peer" and r["gbps"] == r["gbps"]}
    assert table.loc[("float32", "8192x8192"), "vs_peer"] > 0 and table["best_peer"].ne("").sum() == len(with_peers)


def test_sweep_points_are_judged_against_their_own_ceiling(h200_sweep):
    # DRAM points against memcpy of the same point; L2-resident ones against the fastest same-size
    # copy (files recorded before rows carried it get the same rule, analysis/ceilings.py).
    table = sweep_table(h200_sweep)
    for _, row in table.iterrows():
        at = [r for r in h200_sweep if r["dtype"] == row["dtype"] and f"{r['rows']}x{r['cols']}" == row["size"]
              and "[" not in r["name"]]
        copies = [r for r in at if r["kind"] == "ceiling" and r["gbps"] == r["gbps"]]
        if row["resident"] == "DRAM":
            assert row["ceiling"] == "memcpy"
            assert row["pct_of_ceiling"] == pytest.approx(row["pct_of_memcpy"], rel=0.01)
        else:
            top = max(copies, key=lambda r: r["gbps"])
            assert row["ceiling"] == f"L2 ceiling: {top['name']}"
            assert row["pct_of_ceiling"] == pytest.approx(100 * row["gbps"] / top["gbps"])
    l2 = table[table["resident"] == "L2"]
    assert len(l2) and (l2["pct_of_ceiling"] <= l2["pct_of_memcpy"] + 1e-9).all()


def test_sweep_verdicts_say_where_a_peer_still_wins_and_by_how_much(h200_sweep):
    table = sweep_table(h200_sweep)
    verdicts = sweep_verdicts(table)
    judged = table[table["vs_peer"].notna()]
    losing = judged[judged["vs_peer"] < 1]
    assert verdicts[0].startswith(f"the best stage is at or above the fastest peer at {len(judged) - len(losing)} "
                                  f"of {len(judged)} ")
    outliers = table[(table["resident"] == "DRAM") & (table["copy_pct_of_memcpy"] < 90)]
    dram = table[table["resident"] == "DRAM"]
    below = dram[dram["pct_of_ceiling"] < 90]
    short = dram[(dram["pct_of_ceiling"] >= 90) & (dram["pct_of_ceiling"] < 95)]
    shortfall = verdicts[1 + len(losing) + len(outliers):]
    assert len(shortfall) == bool(len(below)) + bool(len(short)) and len(short)
    for line, (_, r) in zip(verdicts[1:1 + len(losing)], losing.iterrows(), strict=True):
        assert line.startswith(f"{r['size']} {r['dtype']} ") and r["best_peer"] in line
        assert f"{100 * (1 / r['vs_peer'] - 1):.1f} %" in line and "spread" in line
    for line, (_, r) in zip(verdicts[1 + len(losing):1 + len(losing) + len(outliers)], outliers.iterrows(),
                            strict=True):
        assert line.startswith(f"{r['size']} {r['dtype']} (DRAM): even the copy kernels reach only")
    # The points short of the ceiling, each with its figure: below 90 % (none in this sweep), then below 95 %.
    assert below.empty and shortfall[0].startswith(f"the best stage is at 90 % of its ceiling or above at all "
                                                   f"{len(dram)} DRAM points, below 95 % at {len(short)}: ")
    for _, r in short.iterrows():
        assert f"{r['size']} {r['dtype']} {r['pct_of_ceiling']:.1f} % ({stage_label(r)})" in shortfall[0]


def _point(rows: int, cols: int, stage_gbps: float) -> list[dict]:
    """A DRAM sweep point: memcpy at 1000 GB/s, one stage and one slower peer."""
    common = {"rows": rows, "cols": cols, "dtype": "float32", "resident": "DRAM", "p10_us": 1.0, "p90_us": 1.1}
    return [{"name": "memcpy", "kind": "ceiling", "gbps": 1000.0, "pct_of_memcpy": 100.0, **common},
            {"name": "copy 16B x1", "kind": "ceiling", "gbps": 990.0, "pct_of_memcpy": 99.0, **common},
            {"name": "vec_tuned", "kind": "stage", "gbps": stage_gbps, "pct_of_memcpy": stage_gbps / 10, **common},
            {"name": "torch eager", "kind": "peer", "gbps": 500.0, "pct_of_memcpy": 50.0, **common}]


def test_the_points_below_the_floor_come_first_then_the_rest_short_of_the_goal():
    verdicts = sweep_verdicts(sweep_table(_point(4096, 4096, 850.0) + _point(8192, 8192, 920.0)
                                          + _point(8192, 4096, 970.0)))
    assert verdicts[-2:] == ["the best stage is below 90 % of its ceiling at 1 of 3 DRAM points: 4096x4096 float32 "
                             "85.0 % (vec_tuned)",
                             "the best stage is below 95 % of its ceiling at 1 more: 8192x8192 float32 92.0 % "
                             "(vec_tuned)"]
    assert sweep_verdicts(sweep_table(_point(8192, 4096, 970.0)))[-1] == (
        "the best stage is at 95 % of its ceiling or above at all 1 DRAM points")


def test_sweep_rows_without_rows_and_cols_make_no_sweep_table():
    # A case whose bench rows give only `size` text (the reduction's): no transpose sweep section.
    assert sweep_table([{"name": "tree", "kind": "stage", "dtype": "float32", "size": "n=1048576", "gbps": 1.0}]).empty


def test_a_sweep_without_its_per_point_ceiling_gets_it_computed(h200_sweep):
    rows = [{k: v for k, v in r.items() if k != "pct_of_point_ceiling"} for r in h200_sweep]
    got = sweep_table(rows).set_index(["dtype", "size"])["pct_of_ceiling"]
    want = sweep_table(h200_sweep).set_index(["dtype", "size"])["pct_of_ceiling"]
    # Within 1 %: at the headline sizes the point also holds the block-shape sweep's own memcpy.
    assert got.to_numpy() == pytest.approx(want.to_numpy(), rel=0.01)
    assert got.notna().all()


def test_a_dram_point_where_memcpy_outruns_every_copy_kernel_is_named():
    # The committed H200 sweep's float16 8192x2048 point: memcpy 20 us, the copy kernels 32-34 us.
    rows = [{"name": "memcpy", "kind": "ceiling", "rows": 8192, "cols": 2048, "dtype": "float16", "gbps": 3400.0,
             "pct_of_memcpy": 100.0, "resident": "DRAM", "p10_us": 19.0, "p90_us": 22.0},
            {"name": "copy 16B x1", "kind": "ceiling", "rows": 8192, "cols": 2048, "dtype": "float16", "gbps": 2108.0,
             "pct_of_memcpy": 62.0, "resident": "DRAM", "p10_us": 29.0, "p90_us": 43.0},
            {"name": "vec_tuned", "kind": "stage", "rows": 8192, "cols": 2048, "dtype": "float16", "gbps": 2040.0,
             "pct_of_memcpy": 60.0, "resident": "DRAM", "p10_us": 30.0, "p90_us": 40.0},
            {"name": "triton transpose", "kind": "peer", "rows": 8192, "cols": 2048, "dtype": "float16",
             "gbps": 2000.0, "pct_of_memcpy": 58.8, "resident": "DRAM", "p10_us": 31.0, "p90_us": 40.0}]
    table = sweep_table(rows)
    assert table.loc[0, "copy_pct_of_memcpy"] == pytest.approx(62.0)
    verdicts = sweep_verdicts(table)
    assert verdicts[-2] == ("8192x2048 float16 (DRAM): even the copy kernels reach only 62.0 % of memcpy there, so % "
                            "of memcpy understates every stage; vec_tuned is at 96.8 % of the fastest copy kernel")
    assert verdicts[-1] == ("the best stage is below 90 % of its ceiling at 1 of 1 DRAM points: 8192x2048 float16 "
                            "60.0 % (vec_tuned)")
    rows[1]["pct_of_memcpy"] = 99.5
    assert not any("copy kernels" in v for v in sweep_verdicts(sweep_table(rows)))


def test_sweep_heat_map_has_a_cell_per_size_and_dtype(f32_analysis, manifest, h200_sweep):
    table = sweep_table(h200_sweep)
    grid = sweep_grid(table, "vs_peer")
    assert list(grid.columns) == sorted(table["dtype"].unique())
    assert set(grid.index) == set(table["size"]) and grid.notna().sum().sum() == table["vs_peer"].notna().sum()
    page = build(f32_analysis, PROV, manifest, sweep=h200_sweep)
    text = render_html(page)
    sweep = page.section("sweep")
    assert sweep.svg.startswith("<svg") and "best stage / fastest peer" in sweep.svg
    assert "% of its ceiling" in sweep.svg and "judged against" in text
    assert all(v in text for v in sweep.verdicts[:1])


def _sigint_handler_name() -> str:
    import signal

    return "ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "handled"


def test_chart_workers_leave_ctrl_c_to_the_parent():
    # A worker interrupted inside the pool's queue lock hung the parent's shutdown (and printed
    # tracebacks); the parent alone takes Ctrl-C and ends the workers.
    with ChartPool(2) as pool:
        got = pool.draw({"a": (_sigint_handler_name, ()), "b": (_sigint_handler_name, ())})()
    assert got == {"a": "ignored", "b": "ignored"}
    assert _sigint_handler_name() == "handled"


# --------------------------------------------------------------------------------------------
# Issue 12: odd values render without a crash or warnings; valid JSON; links in --out replaced;
# chart workers die quietly with their parent.

BAD_DATA = Path(__file__).parents[1] / "data" / "bad"


def _strict_json(text: str):
    def refuse(token: str):
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_huge_value_renders_without_warnings_and_summary_json_is_valid(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    res = subprocess.run([sys.executable, "-m", "profiler_report", "render", "--from",
                          str(BAD_DATA / "huge_value.csv"), "--out", str(tmp_path)], capture_output=True, text=True,
                         cwd=root, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Warning" not in res.stderr and "Traceback" not in res.stderr
    stages = _strict_json((tmp_path / "summary.json").read_text())["stages"]
    assert next(s for s in stages if s["stage"] == "smem")["dram_read_bytes"] == pytest.approx(1e308)


def test_zero_divisors_render(monkeypatch, capsys, tmp_path):
    from gate_support import cli

    code, out, err = cli(monkeypatch, capsys, "render", "--from", BAD_DATA / "zero_divisors.csv", "--out", tmp_path)
    assert code == 0, err
    padded = next(s for s in _strict_json((tmp_path / "summary.json").read_text())["stages"] if s["stage"] == "padded")
    assert padded["shared_wavefronts_per_load"] == 0


def test_summary_json_has_null_where_not_measured(monkeypatch, capsys):
    from gate_support import cli

    code, out, _ = cli(monkeypatch, capsys, "summary", BAD_DATA / "missing_cells.csv", "--format", "json")
    assert code == 0
    smem = _strict_json(out)["stages"][1]
    assert smem["duration_us"] is None and smem["dram_read_bytes"] is None


def test_records_never_hold_nan_or_infinity():
    from profiler_report.util.jsonable import dumps, records

    frame = pd.DataFrame({"a": [1.0, float("nan"), float("inf"), -float("inf")], "b": ["x", "y", "z", "w"]})
    assert [r["a"] for r in records(frame)] == [1.0, None, None, None]
    with pytest.raises(ValueError):
        dumps({"a": float("inf")})


def test_render_replaces_a_symlink_in_out_never_its_target(monkeypatch, capsys, tmp_path):
    from gate_support import cli

    outside = tmp_path / "precious.html"
    outside.write_text("not the report's\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").symlink_to(outside)
    (out / "summary.json").symlink_to(tmp_path / "nowhere.json")  # dangling: replaced too
    code, _, err = cli(monkeypatch, capsys, "render", "--from", BAD_DATA / "raw_trimmed.csv", "--out", out)
    assert code == 0, err
    assert outside.read_text() == "not the report's\n" and not (tmp_path / "nowhere.json").exists()
    assert not (out / "index.html").is_symlink() and "<html" in (out / "index.html").read_text()
    assert not (out / "summary.json").is_symlink()


def test_a_dangling_out_link_is_named_not_file_exists(monkeypatch, capsys, tmp_path):
    from gate_support import cli

    link = tmp_path / "out"
    link.symlink_to(tmp_path / "gone")
    code, _, err = cli(monkeypatch, capsys, "render", "--from", BAD_DATA / "raw_trimmed.csv", "--out", link)
    assert code == 2 and err.count("\n") == 1
    assert "is a symlink to" in err and "which does not exist" in err and "File exists" not in err


_ORPHAN = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from profiler_report.report.chart_pool import ChartPool
pool = ChartPool(2)
later = pool.draw({f"j{i}": (time.sleep, (0.5,)) for i in range(4)})
time.sleep(0.2)  # the workers are drawing
os.kill(os.getpid(), signal.SIGKILL)  # the parent alone dies
"""


def test_chart_workers_of_a_killed_parent_exit_quietly(tmp_path):
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    # The workers inherit the parent's stderr: it closes when the last of them has exited.
    proc = subprocess.run([sys.executable, "-c", _ORPHAN, str(root)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == -9
    assert proc.stderr == "", proc.stderr


def test_a_counter_run_without_a_capture_is_not_called_no_counters():
    from profiler_report.analysis.counterless import unavailable_reason

    assert unavailable_reason({"counters": "collected"}) == "no stage was profiled"
    assert unavailable_reason({"counters": "unavailable (permission)"}) == "permission"
    assert unavailable_reason({"counters": "unavailable (--no-counters)"}) == "--no-counters"


def test_provenance_values_that_are_not_text_are_named_not_printed():
    # A list, a null or a 5 MB string in provenance.json went onto the page as Python's repr,
    # "None", or whole.
    from profiler_report.report.page import ENV_VALUE_CHARS, environment_rows

    rows = dict(environment_rows({"mode": "live", "gpu": ["a", "b"], "sm_count": None, "driver": "x" * 10**6,
                                  "dtype": "float32", "repeats": 30}))
    assert rows["GPU"] == "not readable (a list, not text or a number)"
    assert rows["SMs"] == "unknown (not recorded)" and rows["timing repeats"] == "30"
    assert rows["driver"].endswith(" ... (cut)") and len(rows["driver"]) < ENV_VALUE_CHARS + 20


def test_the_sweep_says_when_every_dram_point_reaches_the_goal():
    rows = [{"name": "memcpy", "kind": "ceiling", "rows": 8192, "cols": 8192, "dtype": "float32", "gbps": 4000.0,
             "pct_of_memcpy": 100.0, "resident": "DRAM", "p10_us": 129.0, "p90_us": 132.0},
            {"name": "vec_tuned", "kind": "stage", "rows": 8192, "cols": 8192, "dtype": "float32", "gbps": 3900.0,
             "pct_of_memcpy": 97.5, "resident": "DRAM", "p10_us": 132.0, "p90_us": 135.0},
            {"name": "triton transpose", "kind": "peer", "rows": 8192, "cols": 8192, "dtype": "float32",
             "gbps": 3800.0, "pct_of_memcpy": 95.0, "resident": "DRAM", "p10_us": 135.0, "p90_us": 138.0}]
    assert sweep_verdicts(sweep_table(rows))[-1] == ("the best stage is at 95 % of its ceiling or above at all 1 "
                                                     "DRAM points")
