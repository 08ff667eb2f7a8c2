"""extract on bad and quirky inputs: tests/data/bad/ (see its README.md and scripts/make_bad_inputs.py).

Every unreadable input raises ReportUnreadableError with a message naming what is wrong; every
CSV quirk seen in the field parses to base units, with missing cells missing (never 0).
"""

from __future__ import annotations

import csv
import io
import math
import subprocess
import sys

import pytest
from conftest import DATA, F32
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_report.capture.csv_details import details_table
from profiler_report.capture.csv_raw import parse_csv_text, read_csv
from profiler_report.capture.load import read_capture
from profiler_report.capture.ncu_rep import read_ncu_rep
from profiler_report.capture.reader_child import source_rows
from profiler_report.capture.units import shared_side, short_kernel_name
from profiler_report.errors import ProfilerReportError, ReportUnreadableError

BAD = DATA / "bad"


def value(capture, launch_id: int, metric: str) -> float:
    return capture.value(launch_id, metric)


def test_bad_inputs_match_their_script():
    res = subprocess.run([sys.executable, "scripts/make_bad_inputs.py", "--check"], capture_output=True, text=True,
                         cwd=DATA.parent.parent, timeout=60)
    assert res.returncode == 0, res.stderr


# --------------------------------------------------------------------------------------------
# Reports that cannot be read


@pytest.mark.parametrize("name, words", [
    ("empty.ncu-rep", "is empty"),
    ("empty.csv", "is empty"),
    ("not_a_report.ncu-rep", "not an Nsight Compute report"),
    ("truncated.ncu-rep", "truncated or corrupt"),
    ("other_format.ncu-rep", "format version 99"),
    ("no_kernel_rows.csv", "no kernel row could be parsed"),
])
def test_unreadable_inputs_raise_one_clear_error(name, words):
    with pytest.raises(ReportUnreadableError) as exc:
        read_capture(BAD / name)
    assert words in exc.value.message
    assert exc.value.exit_code == 2
    assert "\n" not in exc.value.one_line()


def test_a_directory_is_not_a_report():
    with pytest.raises(ReportUnreadableError, match="is a directory"):
        read_capture(F32)


def test_a_missing_file():
    with pytest.raises(ReportUnreadableError, match="does not exist"):
        read_capture(BAD / "no-such-file.ncu-rep")


@pytest.mark.parametrize("kept", [0.05, 0.5, 0.99])
def test_a_cut_real_report_is_truncated(tmp_path, kept):
    # ncu_report 2026.x opens a cut file and reads its first launches: never a partial capture.
    data = (F32 / "profile.ncu-rep").read_bytes()
    half = tmp_path / "half.ncu-rep"
    half.write_bytes(data[: int(len(data) * kept)])
    with pytest.raises(ReportUnreadableError, match="truncated or corrupt"):
        read_ncu_rep(half)


def test_binary_report_named_csv_is_read_by_content(tmp_path):
    renamed = tmp_path / "profile.csv"
    renamed.write_bytes((F32 / "profile.ncu-rep").read_bytes())
    assert read_capture(renamed).kind == "ncu-rep"


def test_text_named_ncu_rep_with_csv_content_is_read_as_csv(tmp_path):
    renamed = tmp_path / "export.ncu-rep"
    renamed.write_bytes((BAD / "raw_trimmed.csv").read_bytes())
    assert read_capture(renamed).kind == "csv"


# --------------------------------------------------------------------------------------------
# CSV quirks (raw page)


@pytest.fixture(scope="module")
def trimmed():
    return read_csv(BAD / "raw_trimmed.csv")


def test_units_row_and_thousands_separators(trimmed):
    # units row under the header (id cells empty): Mbyte -> byte, us -> ns
    assert value(trimmed, 0, "dram__bytes_read.sum") == pytest.approx(80_159_488)
    assert value(trimmed, 1, "gpu__time_duration.sum") == pytest.approx(98_048)
    # "16,252,928" (thousands separators) beside "80.159488" (a float without them)
    assert value(trimmed, 1, "derived__memory_l1_wavefronts_shared_excessive") == 16_252_928


def test_collector_prefixed_duplicate_keeps_the_plain_metric(trimmed):
    # raw.csv holds TPC.TriageCompute.sm__cycles_active.avg = 187797.10 beside sm__cycles_active.avg = 185923.55
    rows = trimmed.metrics[(trimmed.metrics["launch_id"] == 1) & (trimmed.metrics["metric"] == "sm__cycles_active.avg")]
    assert len(rows) == 1
    assert rows["value"].iloc[0] == pytest.approx(185_923.545455)
    assert not trimmed.metrics["metric"].str.startswith("TPC.").any()


def test_missing_markers_stay_missing_never_zero():
    cap = read_csv(BAD / "missing_cells.csv")
    for metric in ("gpu__time_duration.sum", "dram__bytes_read.sum", "derived__memory_l1_wavefronts_shared_excessive"):
        assert math.isnan(value(cap, 1, metric)), metric
        assert not math.isnan(value(cap, 0, metric)), metric


def test_rescaled_units_convert_to_the_same_base_value(trimmed):
    gbyte = read_csv(BAD / "rescaled_gbyte.csv")
    for launch in (0, 1):
        assert value(gbyte, launch, "dram__bytes_read.sum") == pytest.approx(value(trimmed, launch,
                                                                                    "dram__bytes_read.sum"))
        assert gbyte.metrics.query("metric == 'dram__bytes_read.sum'")["unit"].eq("byte").all()


def test_columns_added_removed_and_reordered_are_looked_up_by_header(trimmed):
    cap = read_csv(BAD / "columns_changed.csv")
    for metric in ("gpu__time_duration.sum", "derived__memory_l1_wavefronts_shared_excessive"):
        assert value(cap, 1, metric) == value(trimmed, 1, metric)
    assert value(cap, 1, "smsp__future_metric.sum") == 1024  # an unknown column is kept as a metric
    assert "Green Context" not in set(cap.metrics["metric"])  # a text-valued column is ignored


def test_quoted_kernel_names_with_commas_templates_parentheses():
    cap = read_csv(BAD / "quoted_names.csv")
    launches = cap.launches()
    assert list(launches["kernel"]) == ["ns::transpose_naive", "(anonymous namespace)::tile_kernel"]
    assert launches["demangled"].iloc[1].endswith("(Params<float, 2>)")
    assert value(cap, 1, "launch__registers_per_thread") == 20


def test_several_processes_and_devices_in_one_file():
    cap = read_csv(BAD / "two_processes.csv")
    assert list(cap.launches()["launch_id"]) == [0, 1, 2, 3]
    assert any("2 processes" in n for n in cap.notes)
    assert any("2 devices" in n for n in cap.notes)


def test_repeated_ids_from_joined_exports_are_numbered_in_file_order():
    text = (BAD / "two_processes.csv").read_text()
    records = list(csv.reader(io.StringIO(text)))
    records[4][0], records[5][0] = "0", "1"  # the second process's launches reuse IDs 0 and 1
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL).writerows(records)
    cap = parse_csv_text(buf.getvalue())
    assert list(cap.launches()["launch_id"]) == [0, 1, 2, 3]
    assert any("numbered in file order" in n for n in cap.notes)


def test_basic_set_capture_parses_with_metrics_missing():
    from profiler_report.analysis import analyze
    from profiler_report.analysis.summary import missing_metrics

    cap = read_csv(BAD / "basic_like.csv")
    missing = dict(missing_metrics(cap))
    assert "derived__memory_l1_wavefronts_shared_excessive" in missing
    assert "SourceCounters" in missing["derived__memory_l1_wavefronts_shared_excessive"]
    summary = analyze(cap).summary
    assert summary["shared_excessive_source"].eq("not collected").all()
    assert summary["shared_excessive_wavefronts"].isna().all()  # not 0


# --------------------------------------------------------------------------------------------
# Details page


def test_details_page_is_detected_and_keyed_by_section_and_name():
    cap = read_capture(BAD / "details_trimmed.csv")
    assert cap.kind == "csv-details"
    # 'Memory Throughput' sits in two sections: two entries, not one
    sol = value(cap, 1, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    mwa = value(cap, 1, "dram__bytes.sum.per_second")
    assert sol == pytest.approx(72.39)
    assert mwa == pytest.approx(1.17e12)
    assert value(cap, 1, "gpu__time_duration.sum") == pytest.approx(98_050)
    assert not cap.rules.empty and set(cap.rules["type"]) <= {"optimization", "warning", "error", "none", "ok"}


def test_details_units_rescale_per_kernel_to_base_units():
    table = details_table(BAD / "details_trimmed.csv")
    mt = table[(table["section"] == "Memory Workload Analysis") & (table["name"] == "Memory Throughput")]
    assert list(mt["unit"]) == ["byte/s", "byte/s"]  # Gbyte/s for launch 0, Tbyte/s for launch 1 in the file
    raw = (BAD / "details_trimmed.csv").read_text()
    assert '"Memory Throughput","Gbyte/s"' in raw and '"Memory Throughput","Tbyte/s"' in raw
    assert mt["value"].iloc[0] == pytest.approx(522.78e9)
    assert len(table[table["name"] == "Memory Throughput"]) == 4


def test_details_of_the_whole_fixture_agree_with_the_report(f32_capture):
    cap = read_capture(F32 / "details.csv")
    for launch in range(6):
        a = value(cap, launch, "gpu__time_duration.sum")
        b = value(f32_capture, launch, "gpu__time_duration.sum")
        assert a == pytest.approx(b, rel=5e-3)


# --------------------------------------------------------------------------------------------
# Per-instruction attribution


def test_store_side_conflicts_are_attributed_to_sts(f32_capture):
    src = f32_capture.source
    vec_padded = src[(src["launch_id"] == 4) & (src["shared_excessive_wavefronts"] > 0)]
    assert set(vec_padded["side"]) == {"store"}
    assert vec_padded["sass"].str.contains("STS").all()
    smem = src[(src["launch_id"] == 1) & (src["shared_excessive_wavefronts"] > 0)]
    assert set(smem["side"]) == {"load"}


def test_shared_side():
    assert shared_side("@!P0  STS [R7], R8") == "store"
    assert shared_side("LDS.128 R16, [R32]") == "load"
    assert shared_side("LDGSTS.E.128 [R1], desc[UR4][R2.64]") == "store"
    assert shared_side("LDG.E R5, desc[UR4][R2.64]") == ""


class _Metric:
    """A per-PC ncu_report metric double (two instructions, no line information)."""

    def __init__(self, values: dict[int, float]) -> None:
        self.values = values

    def has_correlation_ids(self) -> bool:
        return True

    def num_instances(self) -> int:
        return len(self.values)

    def correlation_ids(self):
        pcs = list(self.values)
        return type("Ids", (), {"as_uint64": lambda _self, i: pcs[i]})()

    def as_double(self, i: int) -> float:
        return list(self.values.values())[i]


class _ActionWithoutLineinfo:
    """An ncu_report action double for a kernel built without -lineinfo: source_info() is None."""

    SASS = {0x100: "LDS R5, [R5]", 0x180: "STS [R7], R8"}

    def metric_by_name(self, name: str):
        return {"inst_executed": _Metric({0x100: 64.0, 0x180: 64.0}),
                "memory_l1_wavefronts_shared": _Metric({0x100: 2048.0, 0x180: 64.0}),
                "derived__memory_l1_wavefronts_shared_excessive": _Metric({0x100: 1984.0, 0x180: 0.0})}.get(name)

    def sass_by_pc(self, pc: int) -> str:
        return self.SASS[pc]

    def source_info(self, pc: int):
        return None


def test_kernel_without_lineinfo_falls_back_to_sass():
    import pandas as pd

    from profiler_report.analysis.attribution import NO_LINEINFO, attribution
    from profiler_report.capture.model import SOURCE_COLUMNS, Capture

    rows = source_rows(_ActionWithoutLineinfo(), 0)
    assert [r["line"] for r in rows] == [0, 0] and [r["side"] for r in rows] == ["load", "store"]
    cap = Capture(pd.DataFrame(columns=["launch_id", "metric"]), pd.DataFrame(), DATA, "ncu-rep",
                  source=pd.DataFrame(rows, columns=SOURCE_COLUMNS))
    table, note = attribution(cap, 0, None)
    assert note.startswith(NO_LINEINFO)
    assert [r["location"] for r in table] == ["SASS +0x0", "SASS +0x80"]
    assert table[0]["shared_excessive_wavefronts"] == "1,984"


def test_capture_with_lines_but_no_imported_source_says_so(f32_capture):
    from profiler_report.analysis.attribution import attribution

    table, note = attribution(f32_capture, 1, None)
    assert table and all(r["location"].endswith((":58", ":67")) for r in table)
    assert "could not import the source file" in note


# --------------------------------------------------------------------------------------------
# Property tests: any input raises only the project's own errors


@st.composite
def mutated_real_csv(draw) -> str:
    lines = (BAD / "raw_trimmed.csv").read_text().splitlines()
    lines = draw(st.lists(st.sampled_from(lines), min_size=0, max_size=6))
    out = []
    for line in lines:
        action = draw(st.sampled_from(["keep", "cut", "insert", "drop_quote", "swap_commas"]))
        if action == "cut" and line:
            line = line[: draw(st.integers(0, len(line)))]
        elif action == "insert":
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(st.text(max_size=12)) + line[at:]
        elif action == "drop_quote":
            line = line.replace('"', "", draw(st.integers(1, 4)))
        elif action == "swap_commas":
            line = line.replace(",", ";", draw(st.integers(1, 4)))
        out.append(line)
    return "\n".join(out)


CSV_CELLS = st.sampled_from(['"ID"', '"Kernel Name"', '"1,024"', '"nan"', '"n/a"', '"no data"', '""', '"1e400"',
                             '"-1"', '"Mbyte"', '"(32, 8, 1)"', '"Section Name"', '"Metric Name"',
                             '"Metric Value"', '"Rule Name"', '"\x00"', '"', ","])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=400), mutated_real_csv(),
                 st.lists(st.lists(CSV_CELLS, max_size=8).map(",".join), max_size=6).map("\n".join)))
def test_csv_reader_raises_only_project_errors(text):
    try:
        cap = parse_csv_text(text)
    except ProfilerReportError:
        return
    assert len(cap.launches()) >= 1


def test_short_kernel_name_handles_anonymous_namespaces():
    assert short_kernel_name("void (anonymous namespace)::k<T<(int)3>>(P)") == "(anonymous namespace)::k"
