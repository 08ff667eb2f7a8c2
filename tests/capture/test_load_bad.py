"""extract on bad and quirky inputs: tests/data/bad/ (see its README.md and scripts/make_bad_inputs.py).

Every unreadable input raises ReportUnreadableError with a message naming what is wrong; every
CSV quirk seen in the field parses to base units, with missing cells missing (never 0).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import subprocess
import sys

import pandas as pd
import pytest
from conftest import DATA, F32
from hypothesis import HealthCheck, event, given, settings
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


# --------------------------------------------------------------------------------------------
# Never a silently wrong number (issue 12): inputs that would be misread are refused, one line,
# exit 2, naming where; inputs that only look odd are read right.


@pytest.mark.parametrize("name, words", [
    ("row_extra_cell.csv", r"line 4 \(ID 1, transpose_smem\): 30 cells where the header has 28"),
    ("row_missing_cell.csv", r"line 4 \(ID 1, transpose_smem\): 27 cells where the header has 28"),
    ("details_missing_cell.csv", r"line 104 \(ID 1\): 17 cells where the header has 22 \(or 18"),
    ("duplicate_header.csv",
     r"names column 'derived__memory_l1_wavefronts_shared_excessive' twice \(columns 13 and 17\)"),
    ("no_units_row.csv", r"no units row under the header"),
    ("unit_empty.csv", r"column 'gpu__time_duration.sum': gpu__time_duration.sum has no unit .* must be a time"),
    ("unit_made_up.csv", r"column 'dram__bytes_read.sum': unit 'Mbyts' of dram__bytes_read.sum is not an ncu unit"),
    ("value_inf.csv", r"line 4 \(ID 1, transpose_smem\): derived__memory_l1_wavefronts_shared_excessive = 'inf' "
                      r"is not a finite number"),
    ("value_negative.csv", r"line 4 \(ID 1, transpose_smem\): launch__registers_per_thread = '-20' is negative"),
])
def test_inputs_that_would_be_misread_are_refused_naming_where(name, words):
    with pytest.raises(ReportUnreadableError) as exc:
        read_capture(BAD / name)
    assert exc.value.exit_code == 2
    line = exc.value.one_line()
    assert re.search(words, line), line
    assert "\n" not in line and "(fix: " in line


def test_the_refused_edits_would_have_moved_values(trimmed):
    # What the refusals prevent: read by position, launch 1's registers (20) came from the cell
    # two columns to the left once '16,252,928' had become three cells.
    records = list(csv.reader(io.StringIO((BAD / "row_extra_cell.csv").read_text())))
    header, row = records[0], records[3]
    assert row[header.index("launch__registers_per_thread")] != "20"
    assert value(trimmed, 1, "launch__registers_per_thread") == 20


def test_micro_sign_is_the_unit_us(trimmed):
    cap = read_capture(BAD / "unit_micro.csv")
    assert value(cap, 1, "gpu__time_duration.sum") == value(trimmed, 1, "gpu__time_duration.sum") == \
        pytest.approx(98_048)


def test_program_output_before_the_header_is_skipped(trimmed):
    text = (BAD / "long_preamble.csv").read_text()
    assert text.index('"ID"') > 0 and len(text[:text.index('"ID"')].splitlines()) >= 50
    cap = read_capture(BAD / "long_preamble.csv")
    pd.testing.assert_frame_equal(cap.metrics, trimmed.metrics)


def test_an_unbalanced_quote_in_program_output_does_not_swallow_the_header(trimmed):
    text = 'profiler-report: stage "naive did not close its quote\n' + (BAD / "raw_trimmed.csv").read_text()
    pd.testing.assert_frame_equal(parse_csv_text(text).metrics, trimmed.metrics)


def test_a_real_negative_metric_outside_the_registry_is_kept(f32_capture):
    # The H200 capture holds a negative tensor-pipe .min.pct_of_peak: ncu's, not an edit.
    neg = f32_capture.metrics[f32_capture.metrics["value"] < 0]
    assert list(neg["metric"].unique()) == [
        "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active.min.pct_of_peak_sustained_elapsed"]


def test_every_unit_of_the_real_exports_is_known():
    from profiler_report.capture.units import known_unit

    for path in (F32 / "raw.csv", DATA / "h200_f64_2048" / "raw.csv", DATA / "h200_f32_4096_regressed" / "raw.csv"):
        units = list(csv.reader(io.StringIO(path.read_text())))[1]
        assert all(known_unit(u) for u in units), [u for u in units if not known_unit(u)]
    assert known_unit("\u00b5s") and known_unit("\u03bcs") and not known_unit("furlong")


def test_a_fifo_is_not_called_empty(tmp_path):
    fifo = tmp_path / "capture.csv"
    os.mkfifo(fifo)
    with pytest.raises(ReportUnreadableError, match="is a FIFO"):
        read_capture(fifo)


def test_the_mangled_name_is_read_from_the_report(f32_capture):
    launches = f32_capture.launches()
    assert launches["mangled"].iloc[0] == "_Z15transpose_naiveIfEvPKT_PS0_ii"
    assert launches["mangled"].str.startswith("_Z").all()


# --------------------------------------------------------------------------------------------
# Property: a summary that reads an edited capture at all differs from the clean one only in
# the cells the edits touched (issue 12). Edits of cells, units and rows of raw_headline.csv.

_HEADLINE_BASE = BAD / "raw_headline.csv"
#: Replacement cells: values a capture may hold (twice as likely) and values none may ("inf", "-1", text).
_CELL_VALUES = st.sampled_from(["0", "0.5", "123456789", "1,024", "16,252,928", "nan", "n/a", "", "1e302"] * 2
                               + ["-1", "inf", "-inf", "1e400", "abc", "1,2", "\u00b5s"])
_UNIT_VALUES = st.sampled_from(["", "us", "ns", "\u00b5s", "Mbyte", "Gbyte", "byte", "%", "inst", "sector",
                                "furlong", "cycle", "Kbyte/block", "byte/s"])


@st.composite
def _edits(draw):
    """(records, touched): raw_headline.csv's records with 1-3 random edits, and what they touched:
    ("cell", launch, column), ("unit", column) or ("row", launch)."""
    records = [list(r) for r in _BASE_RECORDS]
    touched = []
    for _ in range(draw(st.integers(1, 3))):
        header = records[0]
        metric_cols = [i for i, name in enumerate(header) if "__" in name or name.startswith("memory_")]
        kind = draw(st.sampled_from(["cell"] * 5 + ["unit", "insert_cell", "delete_cell", "delete_row",
                                                      "duplicate_column"]))
        row = draw(st.integers(2, len(records) - 1))
        col = min(draw(st.sampled_from(metric_cols)), len(records[row]) - 1)
        if kind == "cell":
            records[row][col] = draw(_CELL_VALUES)
            touched.append(("cell", records[row][0], header[col]))
        elif kind == "unit":
            records[1][col] = draw(_UNIT_VALUES)
            touched.append(("unit", header[col]))
        elif kind in ("insert_cell", "delete_cell"):
            # Alone, the row is a cell long or short (refused); with a second insert or delete in
            # the same row it has the right length again and the cells from ``col`` on have moved
            # by one column: those cells are the edited ones.
            if kind == "insert_cell":
                records[row].insert(col, draw(_CELL_VALUES))
            else:
                del records[row][col]
            touched += [("cell", records[row][0], name) for name in header[col:]]
        elif kind == "delete_row" and len(records) > 3:
            touched.append(("row", records[row][0]))
            del records[row]
        elif kind == "duplicate_column":
            # A second column named like this one, first in the row, holding another metric's
            # values: the edited cells are the new column's, so read right nothing may change.
            other = draw(st.sampled_from(metric_cols))
            for n, r in enumerate(records):
                r.insert(0, header[col] if n == 0 else (r[other] if other < len(r) else ""))
    return records, touched


def _summary(text: str):
    from profiler_report.analysis import analyze

    return analyze(parse_csv_text(text)).summary.set_index("launch_id")


_BASE_RECORDS = list(csv.reader(io.StringIO(_HEADLINE_BASE.read_text())))


@pytest.fixture(scope="module")
def clean_summary():
    return _summary(_HEADLINE_BASE.read_text())


def _allowed(touched, header: list[str]) -> set[tuple[str, str]]:
    """(launch id, summary column) pairs the edits may change; ("*", column) for every launch."""
    from profiler_report.metrics import HEADLINE

    out: set[tuple[str, str]] = set()
    for t in touched:
        if t[0] == "row":
            out.add((t[1], "*"))
            continue
        launch, metric = (t[1], t[2]) if t[0] == "cell" else ("*", t[1])
        for c in HEADLINE:
            if c.formula is not None and metric in c.needs():
                out.add((launch, c.name))
                if c.name == "shared_excessive_wavefronts":
                    out.add((launch, "shared_excessive_source"))
        if metric.startswith("smsp__average_warps_issue_stalled_"):
            out.add((launch, "top_stalls"))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edits())
def test_an_edited_capture_either_is_refused_or_differs_only_where_edited(clean_summary, edited):
    records, touched = edited
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(records)
    try:
        got = _summary(buf.getvalue())
    except ProfilerReportError as exc:
        assert exc.exit_code == 2 and "\n" not in exc.one_line()
        event("refused")
        return
    event("read")
    allowed = _allowed(touched, records[0])
    for launch in clean_summary.index:
        key = str(launch)
        if (key, "*") in allowed:
            continue
        assert launch in got.index, (launch, touched)
        for column in clean_summary.columns:
            a, b = clean_summary.at[launch, column], got.at[launch, column]
            same = (pd.isna(a) and pd.isna(b)) or a == b
            if not same:
                assert (key, column) in allowed or ("*", column) in allowed, (launch, column, a, b, touched)


@pytest.mark.parametrize("name", ["row_extra_cell.csv", "row_missing_cell.csv", "details_missing_cell.csv",
                                  "duplicate_header.csv", "no_units_row.csv", "unit_empty.csv", "unit_made_up.csv",
                                  "value_inf.csv", "value_negative.csv", "overflow.csv"])
def test_summary_of_a_refused_input_is_one_line_and_exit_2(monkeypatch, capsys, name):
    from gate_support import cli

    code, out, err = cli(monkeypatch, capsys, "summary", BAD / name)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("error: ") and "(fix: " in err
