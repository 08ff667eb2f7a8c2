"""analyze: the staged transpose's real H200 values (float32 4096x4096, float64 2048x2048)."""

from __future__ import annotations

import math

import pytest
from conftest import F32, F32_REGRESSED, F64

from profiler_report.analysis import analyze
from profiler_report.analysis.verdicts import judge
from profiler_report.metrics import headline_row


def _row(analysis, stage):
    s = analysis.summary
    return s[s["stage"] == stage].iloc[0]


def test_shared_memory_bank_conflicts(f32_analysis):
    assert _row(f32_analysis, "smem")["shared_excessive_wavefronts"] > 0
    assert _row(f32_analysis, "smem")["shared_wavefronts_per_load"] > 16
    for stage in ("padded", "unrolled", "vec_swizzled", "vec_deep", "vec_colwalk"):
        assert _row(f32_analysis, stage)["shared_excessive_wavefronts"] == 0, stage
        assert _row(f32_analysis, stage)["shared_excessive_source"] == "ncu"


def test_raw_bank_conflict_counters_are_not_zero_on_conflict_free_code(f32_analysis):
    # The trap the report explains: the raw counter is non-zero while excessive wavefronts are 0.
    padded = _row(f32_analysis, "padded")
    assert padded["bank_conflicts_ld_raw"] > 0
    assert padded["shared_excessive_wavefronts"] == 0


def test_one_chunk_pad_conflicts_on_the_store_side(f32_analysis):
    vp = _row(f32_analysis, "vec_padded")
    assert vp["shared_excessive_wavefronts"] > 0
    assert vp["shared_wavefronts_per_store"] > 3 * vp["shared_wavefronts_per_load"]


def test_global_memory_efficiency(f32_analysis):
    assert _row(f32_analysis, "naive")["global_store_efficiency_pct"] == pytest.approx(12.5)
    assert _row(f32_analysis, "naive")["global_store_sectors_per_request"] == pytest.approx(32, rel=0.01)
    assert _row(f32_analysis, "naive")["l2_excessive_sectors"] > 0
    for stage in ("naive", "smem", "padded", "unrolled", "vec_padded", "vec_swizzled"):
        assert _row(f32_analysis, stage)["global_load_efficiency_pct"] == pytest.approx(100), stage
    for stage in ("smem", "padded", "unrolled", "vec_padded", "vec_swizzled"):
        assert _row(f32_analysis, stage)["global_store_efficiency_pct"] == pytest.approx(100), stage
        assert _row(f32_analysis, stage)["l2_excessive_sectors"] == 0, stage


def test_durations_fall_stage_by_stage(f32_analysis):
    d = [_row(f32_analysis, s)["duration_us"] for s in ("naive", "smem", "padded", "unrolled")]
    assert d[0] > d[1] > d[2] > d[3]
    assert d[0] / d[3] > 3


def test_stall_reasons_top_three(f32_analysis):
    assert _row(f32_analysis, "naive")["top_stalls"].startswith("long_scoreboard")
    stalls = f32_analysis.stalls
    assert len(stalls[stalls["stage"] == "smem"]) > 5
    assert (stalls["cycles_per_issue"] >= 0).all()


def test_expectations_judged_against_measurements(f32_analysis):
    e = f32_analysis.expectations
    for stage in ("smem", "padded", "unrolled"):
        verdicts = set(e[e["stage"] == stage]["verdict"])
        assert verdicts == {"confirmed"}, (stage, e[e["stage"] == stage].to_dict("records"))


def test_deltas_and_verdicts(f32_analysis):
    d = f32_analysis.deltas.set_index("stage")
    assert d.loc["padded", "excessive_wavefronts_removed"] > 0
    assert d.loc["smem", "store_efficiency_gain_pts"] == pytest.approx(87.5)
    assert d.loc["smem", "speedup"] > 2
    assert "faster than naive" in f32_analysis.verdicts["smem"]
    assert "global store efficiency 12.5% -> 100.0% (confirmed)" in f32_analysis.verdicts["smem"]


def test_verdicts_name_the_expected_metrics_first(f32_analysis):
    # unrolled expects "stays conflict-free": that metric leads, the incidental ones follow.
    for v in f32_analysis.verdicts.values():
        if "expected effect:" in v and "also moved:" in v:
            assert v.index("expected effect:") < v.index("also moved:"), v
    v = f32_analysis.verdicts["unrolled"]
    assert "expected effect: excessive shared wavefronts 0 -> 0 (confirmed)" in v, v
    smem = f32_analysis.verdicts["smem"]
    lead = smem.split("also moved:")[0]
    assert "store sectors per request" in lead and "achieved occupancy" not in lead, smem


def test_rule_changes_follow_the_conflicts(f32_analysis):
    rc = f32_analysis.rule_changes
    appear = rc[(rc["stage"] == "smem") & (rc["change"] == "appears")]
    vanish = rc[(rc["stage"] == "padded") & (rc["change"] == "vanishes")]
    assert "SharedMemoryConflicts" in set(appear["rule"])
    assert "SharedMemoryConflicts" in set(vanish["rule"])
    gone = rc[(rc["stage"] == "smem") & (rc["change"] == "vanishes")]
    assert "UncoalescedGlobalAccess" in set(gone["rule"])


def test_float64_changes_the_bank_picture(f64_capture, manifest):
    a = analyze(f64_capture, manifest)
    smem = _row(a, "smem")
    assert smem["shared_excessive_wavefronts"] > 0
    assert _row(a, "padded")["shared_excessive_wavefronts"] == 0
    assert _row(a, "naive")["global_store_efficiency_pct"] == pytest.approx(25)  # 8 of 32 bytes


def test_excessive_is_computed_when_the_derived_metric_is_absent():
    # The per-instruction pair the derived metric is made of (the l1tex__data_pipe_* total also
    # counts wavefronts no instruction counts, and would invent conflicts).
    v = {"memory_l1_wavefronts_shared": 17_301_504.0, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": 17_563_648.0,
         "memory_l1_wavefronts_shared_ideal": 1_048_576.0}
    row = headline_row(v)
    assert row["shared_excessive_wavefronts"] == 16_252_928
    assert row["shared_excessive_source"] == "computed"
    row = headline_row({})
    assert math.isnan(row["shared_excessive_wavefronts"])
    assert row["shared_excessive_source"] == "not collected"


@pytest.mark.parametrize(
    ("old", "new", "direction", "factor", "to", "verdict"),
    [
        (32.0, 4.0, "down", 4, None, "confirmed"),
        (32.0, 16.0, "down", 4, None, "refuted"),
        (4.0, 32.0, "down", None, None, "refuted"),
        (10.0, 10.1, "down", None, None, "no effect"),
        (16e6, 0.0, "down", None, 0, "confirmed"),
        (math.nan, 1.0, "up", None, None, "not measured"),
    ],
)
def test_judge(old, new, direction, factor, to, verdict):
    assert judge(old, new, direction, factor, to)[0] == verdict


def test_foreign_capture_labels(f32_capture):
    a = analyze(f32_capture, None, [("tiled", "^transpose_(padded|unrolled)$"), ("slow", "naive")])
    assert list(a.summary["stage"]) == ["slow", "tiled", "tiled#2"]
    assert a.expectations.empty


def test_time_expectations_are_judged_by_the_spread():
    import pandas as pd

    from profiler_report.analysis.verdicts import judge_timing

    def row(med, p10, p90):
        return pd.Series({"event_median_us": med, "event_p10_us": p10, "event_p90_us": p90})

    # 2 % faster but beyond the run-to-run spread: confirmed, where a fixed 5 % rule says "no effect".
    assert judge_timing(row(136.0, 135.1, 137.4), row(132.7, 132.0, 134.6), "down")[0] == "confirmed"
    assert judge_timing(row(146.0, 144.6, 147.6), row(145.8, 144.4, 147.9), "down")[0] == "no effect"
    assert judge_timing(row(100.0, 99.0, 101.0), row(120.0, 119.0, 121.0), "down")[0] == "refuted"
    assert judge_timing(row(100.0, float("nan"), 101.0), row(90.0, 89.0, 91.0), "down")[0] == "confirmed"


@pytest.mark.parametrize("fixture", [F32, F32_REGRESSED, F64], ids=lambda p: p.name)
def test_the_computed_excessive_pair_equals_ncus_derived_metric_on_every_fixture_launch(fixture):
    from profiler_report.capture.load import read_capture

    wide = read_capture(fixture / "profile.ncu-rep").wide()
    derived = wide["derived__memory_l1_wavefronts_shared_excessive"]
    pair = wide["memory_l1_wavefronts_shared"] - wide["memory_l1_wavefronts_shared_ideal"]
    assert len(wide) >= 5 and derived.notna().all()
    assert (pair == derived).all(), wide.index[pair != derived].tolist()
    without = wide.drop(columns=["derived__memory_l1_wavefronts_shared_excessive"])
    for launch, values in without.iterrows():
        row = headline_row(values.dropna().to_dict())
        assert row["shared_excessive_source"] == "computed"
        assert row["shared_excessive_wavefronts"] == derived[launch]


# --------------------------------------------------------------------------------------------
# Zero divisors, overflow, the load/store split, kernel names (issue 12). Inputs derived from
# the real capture by scripts/make_bad_inputs.py (tests/data/bad/README.md).

BAD = F32.parent / "bad"


@pytest.mark.parametrize(("old", "new", "direction", "factor", "verdict"), [
    (32.0, 0.0, "down", 8, "confirmed"),   # down to 0: beyond any factor, not a ZeroDivisionError
    (0.0, 4.0, "up", 2, "confirmed"),      # up from 0
    (0.0, 0.0, "down", 8, "no effect"),
])
def test_judge_with_a_zero_divisor(old, new, direction, factor, verdict):
    assert judge(old, new, direction, factor, None)[0] == verdict


def test_zero_divisors_give_values_not_a_crash():
    from profiler_report.capture.load import read_capture

    clean = analyze(read_capture(BAD / "raw_headline.csv"), _manifest())
    a = analyze(read_capture(BAD / "zero_divisors.csv"), _manifest())
    assert _row(a, "padded")["shared_wavefronts_per_load"] == 0
    assert _row(a, "smem")["global_store_sectors_per_request"] == 0
    exp = a.expectations.set_index(["stage", "metric"])
    assert exp.loc[("padded", "shared_wavefronts_per_load"), "verdict"] == "confirmed"  # 32 -> 0, factor 8
    assert exp.loc[("smem", "global_store_sectors_per_request"), "verdict"] == "confirmed"
    # every other figure is the clean capture's
    for col in ("shared_excessive_wavefronts", "duration_us", "global_load_efficiency_pct"):
        assert list(a.summary[col]) == list(clean.summary[col]), col


def test_a_speed_ratio_with_a_zero_time_is_not_applicable():
    import pandas as pd

    from profiler_report.analysis.verdicts import stage_verdict

    prev = pd.Series({"stage": "a", "duration_us": 0.0, "top_stalls": ""})
    assert "not applicable" in stage_verdict(prev, pd.Series({"stage": "b", "duration_us": 5.0, "top_stalls": ""}),
                                             "duration_us")


def test_a_sum_that_overflows_is_refused_and_a_huge_value_is_kept():
    from profiler_report.capture.load import read_capture
    from profiler_report.errors import ReportUnreadableError

    with pytest.raises(ReportUnreadableError, match="stage smem: dram_throughput_gbps .* overflows") as exc:
        analyze(read_capture(BAD / "overflow.csv"), _manifest())
    assert exc.value.exit_code == 2
    a = analyze(read_capture(BAD / "huge_value.csv"), _manifest())
    assert _row(a, "smem")["dram_read_bytes"] == pytest.approx(1e308)
    assert math.isfinite(_row(a, "smem")["dram_throughput_gbps"])


def _manifest():
    from profiler_report.model.manifest import load_manifest

    return load_manifest()


def test_the_load_store_split_is_not_collected_when_the_sass_cannot_be_read(f32_capture):
    from profiler_report.analysis.summary import excessive_by_side

    src = f32_capture.source
    ok = excessive_by_side(src, 1)  # transpose_smem: every conflict on the load side
    assert ok["shared_excessive_wavefronts_ld"] == 16_252_928 and ok["shared_excessive_wavefronts_st"] == 0
    # What reader_child gives when ncu_report's sass_by_pc fails: no SASS, side "other shared".
    unread = src.assign(sass="", side=src["side"].where(src["side"] == "", "other shared"))
    split = excessive_by_side(unread, 1)
    assert math.isnan(split["shared_excessive_wavefronts_ld"]) and math.isnan(split["shared_excessive_wavefronts_st"])
    # Without the derived per-instruction metric, wavefronts - ideal at each instruction.
    pair = excessive_by_side(src.assign(shared_excessive_wavefronts=math.nan), 1)
    assert pair == ok


def test_conflict_context_never_shows_not_collected_as_zero(f32_capture, f32_analysis):
    from profiler_report.report.annotate import conflict_context

    row = _row(f32_analysis, "smem").copy()
    row["shared_excessive_wavefronts_ld"] = row["shared_excessive_wavefronts_st"] = math.nan
    text = conflict_context(row, "tile [32][32]")
    assert "16,252,928" in text and "by side: not collected" in text and "loads 0" not in text


def test_stage_patterns_match_the_display_and_the_mangled_name(f32_capture):
    from profiler_report.analysis.stages import assign_stages

    by_display = assign_stages(f32_capture, [("deep", r"transpose_vec_deep<float, \(int\)2>\(const T1 \*")])
    assert list(by_display["kernel"]) == ["transpose_vec_deep"]
    by_mangled = assign_stages(f32_capture, [("n", r"^_Z15transpose_naiveIfEvPKT_PS0_ii$")])
    assert list(by_mangled["kernel"]) == ["transpose_naive"]


def test_two_instantiations_of_one_template_are_told_apart():
    from profiler_report.capture.load import read_capture

    cap = read_capture(BAD / "shared_short_name.csv")
    both = analyze(cap, None, [("t8", r"transpose_tile<float, \(int\)32, \(int\)8>"),
                               ("t32", r"transpose_tile<float, \(int\)32, \(int\)32>")])
    assert list(both.summary["stage"]) == ["t8", "t32"]
    assert list(both.summary["kernel"]) == ["transpose_tile<float, (int)32, (int)8>",
                                            "transpose_tile<float, (int)32, (int)32>"]
    one = analyze(cap, None, [("t32", r"<float, \(int\)32, \(int\)32>")])
    assert list(one.summary["kernel"]) == ["transpose_tile"]  # no other stage shares the name


def test_load_efficiency_is_not_applicable_when_every_load_is_cp_async():
    # ncu gives smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio as 0 when no LDG ran
    # (vec_realigned loads with cp.async only: 0.0 in the H200 capture); 0 % would read as the worst.
    ratio = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
    ldg = "smsp__sass_inst_executed_op_global_ld.sum"
    assert math.isnan(headline_row({ratio: 0.0, ldg: 0.0})["global_load_efficiency_pct"])
    assert headline_row({ratio: 32.0, ldg: 524288.0})["global_load_efficiency_pct"] == pytest.approx(100)
    assert headline_row({ratio: 16.0})["global_load_efficiency_pct"] == pytest.approx(50)  # older captures: no guard


def test_an_expectation_on_a_misspelled_metric_names_the_closest_ones(f32_capture, manifest):
    # Still "not measured" (no value), but the why says the capture has no such metric and
    # names the closest, so a typo in stages.toml or --expect is not a silent non-check.
    from dataclasses import replace

    from profiler_report.model.manifest import Expectation

    smem = next(s for s in manifest.stages if s.id == "smem")
    typo = replace(smem, expect=(Expectation("global_store_eficiency_pct", "up", "stores coalesced"),
                                 Expectation("l1tex__t_sectors_pipe_lsu_mem_global_op_st.summ", "down", "fewer"),
                                 Expectation("global_store_efficiency_pct", "up", "stores coalesced")))
    naive = next(s for s in manifest.stages if s.id == "naive")
    e = analyze(f32_capture, manifest, expect=(naive, typo)).expectations
    e = e[e["stage"] == "smem"].reset_index(drop=True)
    assert list(e["verdict"]) == ["not measured", "not measured", "confirmed"]
    assert e["why"][0].startswith("no summary column or ncu metric named 'global_store_eficiency_pct' in this "
                                  "capture (closest: global_store_efficiency_pct, "), e["why"][0]
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum" in e["why"][1], e["why"][1]
