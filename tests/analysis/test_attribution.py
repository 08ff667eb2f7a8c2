"""analysis.attribution: the per-instruction table ranks by what the stage is about, one row per
source line; on the committed real H200 capture (float32 4096x4096, NVRTC -lineinfo)."""

from __future__ import annotations

from profiler_report.analysis.attribution import attribution, by_line, ranking
from profiler_report.util.resources import resource_dir

SOURCE = (resource_dir("kernels") / "transpose" / "transpose.cu").read_text()
NAIVE, SMEM, PADDED, COPY = 0, 1, 2, 8  # launch ids of the capture


def test_the_reader_keeps_per_pc_global_sectors_and_stall_samples(f32_capture):
    naive = f32_capture.source[f32_capture.source["launch_id"] == NAIVE]
    stg = naive[naive["sass"].str.contains("STG")].iloc[0]
    # 4 of 32 bytes per sector used: 8 sectors per request where 1 would do (ncu's own figures).
    assert stg["global_sectors"] == 16_777_216 and stg["global_ideal_sectors"] == 2_097_152
    assert stg["global_excessive_sectors"] == 14_680_064
    assert stg["stall_samples"] > 0 and stg["top_stall"] == "long_scoreboard"
    assert (naive["stall_samples"].fillna(0) >= 0).all()


def test_an_uncoalesced_kernel_ranks_its_store_first(f32_capture):
    rows, note = attribution(f32_capture, NAIVE, SOURCE)
    assert rows[0]["ranked_by"] == "global" and rows[0]["global_excessive_sectors"] == "14,680,064"
    assert "STG" in rows[0]["sass"].split(" / ")[0]  # the store leads its line, before the load
    assert "out[(size_t)x * rows + (y + j)]" in rows[0]["line_text"]
    assert "derived__memory_l2_theoretical_sectors_global_excessive" in note and "one row per source line" in note
    assert not any("LDC R1" in r["sass"] and "S2R" in r["sass"] for r in rows[:1])  # never the prologue


def test_shared_memory_kernels_rank_by_excessive_wavefronts(f32_capture):
    rows, _ = attribution(f32_capture, SMEM, SOURCE)
    assert rows[0]["ranked_by"] == "shared" and rows[0]["location"].endswith(":67")
    assert rows[0]["shared_excessive_wavefronts"] == "16,252,928" and rows[0]["side"] == "load"
    assert rows[0]["global_sectors"] == "-"  # a shared access has no global sectors
    rows, _ = attribution(f32_capture, PADDED, SOURCE)
    assert {r["ranked_by"] for r in rows} == {"shared"} and all(r["shared_excessive_wavefronts"] == "0" for r in rows)


def test_a_coalesced_kernel_without_shared_memory_ranks_by_stall_samples(f32_capture):
    rows, note = attribution(f32_capture, COPY, SOURCE)
    assert rows[0]["ranked_by"] == "stalls" and "smsp__pcsamp_warps_issue_stalled_" in note
    samples = [int(r["stall_samples"].split()[0].replace(",", "")) for r in rows]
    assert samples == sorted(samples, reverse=True) and samples[0] > 10 * samples[-1]
    assert "out[(size_t)(y + j) * cols + x] = in[" in rows[0]["line_text"]  # the copy's load/store line


def test_grouping_by_line_sums_counters_never_ratios(f32_capture):
    sub = f32_capture.source[f32_capture.source["launch_id"] == COPY]
    name, pool = ranking(sub)
    grouped = by_line(pool, "stall_samples")
    assert name == "stalls" and grouped["line"].is_unique and len(grouped) < len(pool)
    assert grouped["stall_samples"].sum() == pool["stall_samples"].sum()
    assert grouped["inst_executed"].sum() == pool["inst_executed"].sum()
