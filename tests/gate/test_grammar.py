"""gate.grammar: the thresholds file and the rule grammar (units, refused names, fuzzing)."""

from __future__ import annotations

import re

import pytest
from gate_support import REPO, by, refused
from hypothesis import given, settings
from hypothesis import strategies as st

from profiler_report import gate
from profiler_report.errors import ProfilerReportError, ThresholdsError
from profiler_report.gate.grammar import parse_rule, parse_thresholds, parse_thresholds_data

# ---------------------------------------------------------------------------------------------
# Grammar


def test_rule_forms():
    r = parse_rule("shared_excessive_wavefronts   ==  0", "t")
    assert (r.metric, r.kind, r.op, r.value, r.ref) == ("shared_excessive_wavefronts", "headline", "==", 0, None)
    assert r.text == "shared_excessive_wavefronts == 0"
    r = parse_rule("duration <= 1.10 * baseline", "t")
    assert (r.metric, r.kind, r.op, r.ref, r.factor) == ("event_median_us", "timing", "<=", "baseline", 1.10)
    assert parse_rule("duration <= baseline * 1.1", "t").factor == 1.1
    r = parse_rule("duration < previous", "t")
    assert (r.ref, r.factor) == ("previous", 1.0)
    r = parse_rule("global_store_efficiency_pct <= 25 %", "t")
    assert (r.value, r.stated_unit) == (25, "%")
    r = parse_rule("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum == 2097152", "t")
    assert r.kind == "raw"


def test_units_convert_to_the_metric_unit():
    assert parse_rule("duration <= 0.04 ms", "t").limit_in("us") == pytest.approx(40)
    assert parse_rule("duration <= 40000 ns", "t").limit_in("us") == pytest.approx(40)
    assert parse_rule("event_gbps >= 3 TB/s", "t").limit_in("GB/s") == pytest.approx(3000)
    assert parse_rule("dram__bytes_read.sum <= 1 TB", "t").limit_in("MB") == pytest.approx(1e6)
    assert parse_rule("dram__bytes_read.sum <= 2 kB", "t").limit_in("B") == pytest.approx(2000)
    assert parse_rule("shared_mem_per_block_bytes <= 8 KB", "t").limit_in("byte") == 8000
    table = parse_thresholds('[stage.naive]\nrules = [{ rule = "global_store_efficiency_pct <= 25", unit = "%" }]')
    assert table.rules[0].stated_unit == "%"


@pytest.mark.parametrize("text, fragment", [
    ("global_store_efficiency_pct <= 25 us", "unit 'us' does not match global_store_efficiency_pct, which is in %"),
    ("shared_excessive_wavefronts == 0 %", "which is in wavefront"),
    ("duration <= 40 %", "which is in us"),
])
def test_wrong_unit_is_refused(text, fragment):
    with refused(fragment):
        parse_rule(text, "t")


@pytest.mark.parametrize("old, new", [
    ("gld_efficiency", "global_load_efficiency_pct"),
    ("gst_efficiency", "global_store_efficiency_pct"),
    ("shared_ld_bank_conflict", "shared_excessive_wavefronts"),
    ("shared_st_bank_conflict", "shared_excessive_wavefronts"),
    ("shared_load_transactions_per_request", "shared_wavefronts_per_load"),
    ("gld_transactions_per_request", "global_load_sectors_per_request"),
    ("gst_transactions_per_request", "global_store_sectors_per_request"),
])
def test_nvprof_names_point_to_their_ncu_replacement(old, new):
    with pytest.raises(ThresholdsError) as exc:
        parse_rule(f"{old} <= 25", "t")
    line = exc.value.one_line()
    assert "nvprof" in line and new in line and "\n" not in line


def test_gst_efficiency_names_the_ncu_source():
    with pytest.raises(ThresholdsError) as exc:
        parse_rule("gst_efficiency <= 25", "t")
    assert "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio / 32" in exc.value.one_line()


@pytest.mark.parametrize("name", [
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "bank_conflicts_ld_raw", "bank_conflicts_st_raw",
])
def test_raw_bank_conflict_counters_are_refused(name):
    with refused("shared_excessive_wavefronts"):
        parse_rule(f"{name} == 0", "t")


@pytest.mark.parametrize("name", ["duration_us", "gpu__time_duration.sum", "dram_throughput_gbps", "dram_read_gbps",
                                  "dram_read_pct_peak"])
def test_single_profiled_durations_are_refused(name):
    with refused("single profiled launch.*`duration`"):
        parse_rule(f"{name} <= 40", "t")


def test_time_is_never_gated_with_equality():
    with refused("not deterministic"):
        parse_rule("duration == 40", "t")


def test_unknown_metric_suggests_the_closest():
    with refused("did you mean shared_excessive_wavefronts"):
        parse_rule("shared_excesive_wavefronts == 0", "t")


@pytest.mark.parametrize("text, fragment", [
    ("", "holds no rules"),
    ("[stage.smem]\nrule = ['duration < previous']", "unknown key 'rule'.*did you mean rules"),
    ("[stage.smem]\nrules = []", "non-empty list"),
    ("[stage.smem]\nrules = 'duration < previous'", "non-empty list"),
    ("[stage.smem]\noptional = 'yes'\nrules = ['duration < previous']", "true or false"),
    ("[stage.smem]\nrules = [3]", "string or a table"),
    ("[kernel.'transpose_(']\nrules = ['duration < previous']", "bad kernel-name regular expression"),
    ("stages = 1", "unknown key 'stages'.*did you mean stage"),
    ("version = 2\n[stage.a]\nrules = ['duration < previous']", "version 2"),
    ("[stage.a]\nrules = ['shared_excessive_wavefronts = 0']", "'=' is written '=='"),
    ("[stage.a]\nrules = ['shared_excessive_wavefronts == lots']", "cannot parse the limit"),
    ("[stage.a]\nrules = ['shared_excessive_wavefronts <= 1e999']", "not a finite number"),
    ("[stage.a]\nrules = ['duration <= 0 * previous']", "factor must be positive"),
])
def test_bad_files_are_thresholds_errors(text, fragment):
    with refused(fragment):
        parse_thresholds(text)


_FRAGMENTS = ["[stage.smem]", "[stage.padded]", "[kernel.'transpose_.*']", "[stage]", "rules = [", "]", "[[stage]]",
              "'duration < previous',", '"shared_excessive_wavefronts == 0",', "optional = true", "optional = 3",
              "{ rule = 'duration <= 40', unit = 'ms' },", "{ unit = '%' },", "version = 1", "stage = 3",
              "rules = 'x'", "'gst_efficiency <= 25',", "'l1tex__t_sectors.sum >= 1e3 sector',", "= =", "[",
              "'event_gbps >= 0.9 * baseline',", "kernel = { a = 1 }", "'x' = 1", "rules = [[1, 2]]"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parser_raises_only_its_own_errors_on_any_text(text):
    try:
        parse_thresholds(text)
    except ProfilerReportError:
        pass


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=12))
def test_parser_raises_only_its_own_errors_on_toml_ish_text(lines):
    try:
        parse_thresholds("\n".join(lines))
    except ProfilerReportError:
        pass


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
    | st.sampled_from(["duration < previous", "shared_excessive_wavefronts == 0 %", "gst_efficiency <= 2"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["stage", "kernel", "rules", "rule", "unit", "optional", "smem", "version", "x"]),
        inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_parser_raises_only_its_own_errors_on_any_structure(data):
    try:
        parse_thresholds_data(data)
    except ProfilerReportError:
        pass


_RULE_TOKENS = ["duration", "event_gbps", "shared_excessive_wavefronts", "l1tex__t.sum", "==", "<=", ">", "<", "*",
                "baseline", "previous", "1.5", "-3", "1e999", "%", "us", "GB/s", "MB", " ", "nan", "inf", "0"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_RULE_TOKENS), st.text(max_size=4)), max_size=8), st.text(max_size=5))
def test_rule_parser_raises_only_its_own_errors(parts, unit):
    try:
        parse_rule(" ".join(parts), "t", unit=unit)
    except ProfilerReportError:
        pass


def test_readme_example_parses_and_runs(good_run):
    text = (REPO / "README.md").read_text() if (REPO / "README.md").is_file() else ""
    if "## Regression gate" not in text:
        pytest.skip("README has no regression-gate section")
    toml = re.search(r"```toml\n(.*?)```", text[text.index("## Regression gate"):], re.S).group(1)
    results = gate.check_run(parse_thresholds(toml, "README.md"), good_run)
    assert {r.verdict for r in results} <= {"pass", "not measured", "skipped"}
    assert by(results, "unrolled", "event_gbps >= 3000 GB/s").verdict == "not measured"


def test_default_thresholds_state_the_staged_transpose(default_thresholds):
    rules = {(r.stage, r.text) for r in default_thresholds.rules}
    assert ("smem", "shared_excessive_wavefronts > 0") in rules
    assert ("smem", "shared_wavefronts_per_load >= 16") in rules
    assert ("naive", "global_store_efficiency_pct <= 25 %") in rules
    for stage in ("padded", "unrolled", "vec_swizzled", "vec_deep", "vec_colwalk"):
        assert (stage, "shared_excessive_wavefronts == 0") in rules
    for stage in ("smem", "padded", "unrolled", "vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk"):
        assert (stage, "global_store_efficiency_pct == 100 %") in rules
    for stage in ("smem", "padded", "unrolled", "vec_padded", "vec_deep", "vec_colwalk"):
        assert (stage, "duration < previous") in rules
    # vec_swizzled is not measurably faster than vec_padded on the H200: deliberately no time rule.
    assert not [r.text for r in default_thresholds.rules if r.stage == "vec_swizzled" and r.kind == "timing"]
    optional = {r.stage for r in default_thresholds.rules if r.optional}
    assert optional == {"vec_padded", "vec_swizzled", "vec_deep", "vec_colwalk", "vec_tuned", "vec_peeled",
                        "vec_realigned"}


