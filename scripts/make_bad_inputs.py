"""Derive the small bad and quirky inputs under tests/data/bad/ from the real H200 captures.

Every file is the real capture tests/data/h200_f32_4096 (ncu 2025.3.1, --set full), trimmed or
altered in one stated way; tests/data/bad/README.md lists them. Nothing here is measured: the
alterations exist to exercise the readers' error paths and CSV quirks seen in the field.

    python3 scripts/make_bad_inputs.py            # (re)write tests/data/bad/
    python3 scripts/make_bad_inputs.py --check    # exit 1 when a committed file differs
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tests" / "data" / "h200_f32_4096"
OUT = ROOT / "tests" / "data" / "bad"
sys.path.insert(0, str(ROOT))
from profiler_report.metrics import NCU_METRICS  # noqa: E402  (standard library only)

#: Identifying columns kept in the trimmed raw page (as ncu 2025.3.1 writes them).
ID_COLUMNS = [
    "ID", "Process ID", "Process Name", "Host Name",
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
    "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC",
]
#: Metric columns kept: the headline inputs, the raw bank-conflict counters, and one metric that
#: the raw page holds twice (collector-prefixed TPC.TriageCompute.<metric> beside the plain one).
METRIC_COLUMNS = [
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "derived__memory_l1_wavefronts_shared_excessive", "memory_l1_wavefronts_shared",
    "memory_l1_wavefronts_shared_ideal",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "launch__registers_per_thread",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "TPC.TriageCompute.sm__cycles_active.avg", "sm__cycles_active.avg",
    "device__attribute_display_name",
]
#: Launches kept: 0 = transpose_naive, 1 = transpose_smem.
LAUNCHES = ("0", "1")
#: Metrics a `--set basic` capture lacks (Source Counters and Memory Workload Analysis tables).
NOT_IN_BASIC = [
    "derived__memory_l1_wavefronts_shared_excessive", "memory_l1_wavefronts_shared",
    "memory_l1_wavefronts_shared_ideal",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
]
REP_BYTES = 64 * 1024


def read_records(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def write_records(records: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(records)
    return buf.getvalue().encode()


def trimmed_raw() -> list[list[str]]:
    """Header, units row and the LAUNCHES rows of raw.csv, cut to ID_COLUMNS + METRIC_COLUMNS."""
    records = read_records(SRC / "raw.csv")
    header = records[0]
    idx = [header.index(c) for c in ID_COLUMNS + METRIC_COLUMNS]
    keep = [records[0], records[1]] + [r for r in records[2:] if r[0] in LAUNCHES]
    return [[r[i] for i in idx] for r in keep]


def _set(records: list[list[str]], row: int, column: str, value: str) -> None:
    records[row][records[0].index(column)] = value


def missing_cells() -> list[list[str]]:
    """Launch 1 (transpose_smem) with 'nan', 'n/a' and 'no data' in three metric cells."""
    r = trimmed_raw()
    _set(r, 3, "gpu__time_duration.sum", "nan")
    _set(r, 3, "dram__bytes_read.sum", "n/a")
    _set(r, 3, "derived__memory_l1_wavefronts_shared_excessive", "no data")
    return r


def rescaled_gbyte() -> list[list[str]]:
    """dram__bytes_read.sum / dram__bytes_write.sum restated in Gbyte (value / 1000) instead of Mbyte."""
    r = trimmed_raw()
    for column in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
        i = r[0].index(column)
        assert r[1][i] == "Mbyte", r[1][i]
        r[1][i] = "Gbyte"
        for row in r[2:]:
            row[i] = f"{float(row[i]) / 1000:.9f}"
    return r


def columns_changed() -> list[list[str]]:
    """Columns as another ncu version might write them: Context, Stream and Host Name dropped,
    two unknown columns added, metric columns in reverse order."""
    r = trimmed_raw()
    drop = {"Context", "Stream", "Host Name"}
    ids = [c for c in ID_COLUMNS if c not in drop]
    metrics = list(reversed(METRIC_COLUMNS))
    order = [r[0].index(c) for c in ids + metrics]
    out = [[row[i] for i in order] for row in r]
    out[0] += ["Green Context", "smsp__future_metric.sum"]
    out[1] += ["", "inst"]
    for row in out[2:]:
        row += ["0", "1,024"]
    return out


def no_kernel_rows() -> list[list[str]]:
    """The header and units row with kernel rows whose ID cells are not numbers."""
    r = trimmed_raw()
    for row in r[2:]:
        row[0] = "#"
    return r


def quoted_names() -> list[list[str]]:
    """Kernel names with commas, nested templates and parentheses inside the quoted cell."""
    r = trimmed_raw()
    i = r[0].index("Kernel Name")
    r[2][i] = "void ns::transpose_naive<float, 32, (int)8>(const float *, float *, int, int)"
    r[3][i] = "void (anonymous namespace)::tile_kernel<Tile<32, 33>, Op<(bool)1>>(Params<float, 2>)"
    return r


def two_processes() -> list[list[str]]:
    """The two launches again as launches 2 and 3 of a second process (pid 817) on device 1."""
    r = trimmed_raw()
    extra = []
    for n, row in enumerate(r[2:]):
        copy = list(row)
        copy[0] = str(2 + n)
        copy[r[0].index("Process ID")] = "817"
        copy[r[0].index("Device")] = "1"
        extra.append(copy)
    return r + extra


def basic_like() -> list[list[str]]:
    """A capture without the metrics `--set basic` leaves out (NOT_IN_BASIC columns removed)."""
    r = trimmed_raw()
    keep = [i for i, c in enumerate(r[0]) if c not in NOT_IN_BASIC]
    return [[row[i] for i in keep] for row in r]


def trimmed_details() -> list[list[str]]:
    """details.csv for launches 0 and 1 (real rows: 'Memory Throughput' sits in two sections, and
    its unit is Gbyte/s for one launch and Tbyte/s for the other)."""
    records = read_records(SRC / "details.csv")
    return [records[0]] + [r for r in records[1:] if r and r[0] in LAUNCHES]


def headline_raw() -> list[list[str]]:
    """Header, units row and every launch of raw.csv, cut to ID_COLUMNS and the raw metrics the
    registry reads (profiler_report.metrics.NCU_METRICS): the clean base of the edits below and
    of the property test over random edits."""
    records = read_records(SRC / "raw.csv")
    header = records[0]
    idx = [header.index(c) for c in ID_COLUMNS + [m.name for m in NCU_METRICS] + ["device__attribute_display_name"]]
    return [[r[i] for i in idx] for r in records]


def _row_of(records: list[list[str]], launch: str) -> list[str]:
    return next(r for r in records[2:] if r[0] == launch)


def row_extra_cell() -> list[list[str]]:
    """Launch 1's derived__memory_l1_wavefronts_shared_excessive '16,252,928' as three cells, as
    an unquoted 16,252,928 reads: every cell to its right moves one column on, twice."""
    r = trimmed_raw()
    i = r[0].index("derived__memory_l1_wavefronts_shared_excessive")
    row = _row_of(r, "1")
    assert row[i] == "16,252,928", row[i]
    row[i:i + 1] = row[i].split(",")
    return r


def row_missing_cell() -> list[list[str]]:
    """Launch 1 with its dram__bytes_read.sum cell deleted (a stray edit): one cell too few."""
    r = trimmed_raw()
    del _row_of(r, "1")[r[0].index("dram__bytes_read.sum")]
    return r


def duplicate_header() -> list[list[str]]:
    """A second derived__memory_l1_wavefronts_shared_excessive column, earlier in the row,
    holding the raw l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum values."""
    r = trimmed_raw()
    at = r[0].index("gpu__time_duration.sum")
    src = r[0].index("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    for n, row in enumerate(r):
        row.insert(at, "derived__memory_l1_wavefronts_shared_excessive" if n == 0 else row[src])
    return r


def no_units_row() -> list[list[str]]:
    """raw_trimmed without its units row (us, Mbyte: the values would read as ns and bytes)."""
    r = trimmed_raw()
    return [r[0], *r[2:]]


def _unit(column: str, unit: str) -> Callable[[], list[list[str]]]:
    def make() -> list[list[str]]:
        r = trimmed_raw()
        r[1][r[0].index(column)] = unit
        return r
    return make


def _cell_edit(launch: str, column: str, value: str, base: Callable[[], list[list[str]]] = trimmed_raw
               ) -> Callable[[], list[list[str]]]:
    def make() -> list[list[str]]:
        r = base()
        _row_of(r, launch)[r[0].index(column)] = value
        return r
    return make


def zero_divisors() -> list[list[str]]:
    """headline_raw with 0 where an expected effect divides: transpose_padded's (launch 2)
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum and transpose_smem's (launch 1)
    l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum (its shared wavefronts per load and global
    store sectors per request become 0, the expected 'down by a factor' divides by them)."""
    r = headline_raw()
    _row_of(r, "2")[r[0].index("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")] = "0"
    _row_of(r, "1")[r[0].index("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")] = "0.000000"
    return r


def overflow() -> list[list[str]]:
    """headline_raw with launch 1's DRAM bytes read and written each 1e302 Mbyte (1e308 bytes):
    finite, but their sum (dram_throughput_gbps) overflows."""
    r = headline_raw()
    for column in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
        assert r[1][r[0].index(column)] == "Mbyte"
        _row_of(r, "1")[r[0].index(column)] = "1e302"
    return r


def without_derived_excessive() -> list[list[str]]:
    """headline_raw without derived__memory_l1_wavefronts_shared_excessive, as a capture that did
    not collect it: its value is computed from memory_l1_wavefronts_shared(_ideal)."""
    r = headline_raw()
    i = r[0].index("derived__memory_l1_wavefronts_shared_excessive")
    return [row[:i] + row[i + 1:] for row in r]


def long_preamble() -> bytes:
    """60 lines of the capture's own ncu.log (program and ncu output, cycled) before raw_trimmed,
    as `ncu --csv` writes the page after whatever the program printed."""
    log = [line for line in (SRC / "ncu.log").read_text().splitlines() if line.strip()]
    lines = [log[i % len(log)] for i in range(60)]
    return ("\n".join(lines) + "\n").encode() + write_records(trimmed_raw())


def shared_short_name() -> list[list[str]]:
    """Launches 0 and 1 renamed to two instantiations of one template, transpose_tile<float,
    (int)32, (int)8> and <float, (int)32, (int)32>: one short name, two display names."""
    r = trimmed_raw()
    i = r[0].index("Kernel Name")
    _row_of(r, "0")[i] = "void transpose_tile<float, (int)32, (int)8>(const T1 *, T1 *, int, int)"
    _row_of(r, "1")[i] = "void transpose_tile<float, (int)32, (int)32>(const T1 *, T1 *, int, int)"
    return r


def details_missing_cell() -> list[list[str]]:
    """details_trimmed with the Metric Unit cell of launch 1's 'Duration' row deleted."""
    r = trimmed_details()
    h = r[0]
    row = next(x for x in r[1:] if x[0] == "1" and x[h.index("Metric Name")] == "Duration")
    del row[h.index("Metric Unit")]
    return r


def rep_prefix() -> bytes:
    """First 64 KB of profile.ncu-rep: the NVR header survives, the launches do not."""
    with (SRC / "profile.ncu-rep").open("rb") as fh:
        return fh.read(REP_BYTES)


def rep_other_format() -> bytes:
    """rep_prefix with the report format version (uint16 after the NVR magic) set from 2 to 99."""
    data = bytearray(rep_prefix())
    assert data[:4] == b"NVR\x00" and data[4:6] == b"\x02\x00", data[:8]
    data[4:6] = (99).to_bytes(2, "little")
    return bytes(data)


#: file name -> (maker, what it is). README.md is written from the descriptions.
FILES: dict[str, tuple[Callable[[], bytes], str]] = {
    "raw_trimmed.csv": (lambda: write_records(trimmed_raw()),
                        "raw page cut to launches 0-1 and 27 columns; keeps the real quirks: units row with "
                        "empty id cells, '16,252,928' beside '80.159488', Mbyte and us units, and "
                        "TPC.TriageCompute.sm__cycles_active.avg beside a different sm__cycles_active.avg"),
    "missing_cells.csv": (lambda: write_records(missing_cells()),
                          "raw_trimmed with 'nan', 'n/a' and 'no data' in three cells of launch 1"),
    "rescaled_gbyte.csv": (lambda: write_records(rescaled_gbyte()),
                           "raw_trimmed with the DRAM byte columns restated in Gbyte instead of Mbyte"),
    "columns_changed.csv": (lambda: write_records(columns_changed()),
                            "raw_trimmed with Context/Stream/Host Name dropped, two unknown columns added "
                            "and the metric columns reversed"),
    "no_kernel_rows.csv": (lambda: write_records(no_kernel_rows()),
                           "raw_trimmed whose kernel rows have '#' as ID: no kernel row parses"),
    "quoted_names.csv": (lambda: write_records(quoted_names()),
                         "raw_trimmed with kernel names holding commas, templates and parentheses"),
    "two_processes.csv": (lambda: write_records(two_processes()),
                          "raw_trimmed plus the same two rows as launches 2-3 of pid 817 on device 1"),
    "basic_like.csv": (lambda: write_records(basic_like()),
                       "raw_trimmed without the columns `--set basic` does not collect"),
    "details_trimmed.csv": (lambda: write_records(trimmed_details()),
                            "details page cut to launches 0-1 (real rows, unaltered)"),
    "raw_headline.csv": (lambda: write_records(headline_raw()),
                         "raw page, all 9 launches, cut to the id columns and every raw metric the metric registry "
                         "reads (unaltered): the base of the edits below and of the property test"),
    "row_extra_cell.csv": (lambda: write_records(row_extra_cell()),
                           "raw_trimmed with launch 1's '16,252,928' as three cells (an unquoted 16,252,928)"),
    "row_missing_cell.csv": (lambda: write_records(row_missing_cell()),
                             "raw_trimmed with launch 1's dram__bytes_read.sum cell deleted"),
    "duplicate_header.csv": (lambda: write_records(duplicate_header()),
                             "raw_trimmed with a second derived__memory_l1_wavefronts_shared_excessive column, "
                             "earlier in the row, holding the raw ld bank-conflict counter"),
    "no_units_row.csv": (lambda: write_records(no_units_row()), "raw_trimmed without its units row"),
    "unit_empty.csv": (lambda: write_records(_unit("gpu__time_duration.sum", "")()),
                       "raw_trimmed with an empty unit cell for gpu__time_duration.sum (us in the capture)"),
    "unit_made_up.csv": (lambda: write_records(_unit("dram__bytes_read.sum", "Mbyts")()),
                         "raw_trimmed with dram__bytes_read.sum in 'Mbyts', a unit ncu does not write"),
    "unit_micro.csv": (lambda: write_records(_unit("gpu__time_duration.sum", "\u00b5s")()),
                       "raw_trimmed with gpu__time_duration.sum in 'µs' (micro sign) instead of 'us'"),
    "value_inf.csv": (lambda: write_records(_cell_edit("1", "derived__memory_l1_wavefronts_shared_excessive",
                                                       "inf")()),
                      "raw_trimmed with launch 1's excessive shared wavefronts 'inf'"),
    "value_negative.csv": (lambda: write_records(_cell_edit("1", "launch__registers_per_thread", "-20")()),
                           "raw_trimmed with launch 1's registers per thread '-20'"),
    "zero_divisors.csv": (lambda: write_records(zero_divisors()),
                          "raw_headline with 0 shared load wavefronts in launch 2 and 0 global store sectors in "
                          "launch 1 (divisors of expected effects)"),
    "overflow.csv": (lambda: write_records(overflow()),
                     "raw_headline with launch 1's DRAM bytes read and written 1e302 Mbyte each (their sum "
                     "overflows)"),
    "huge_value.csv": (lambda: write_records(_cell_edit("1", "dram__bytes_read.sum", "1e302", headline_raw)()),
                       "raw_headline with launch 1's DRAM bytes read 1e302 Mbyte (1e308 bytes: finite, nothing "
                       "overflows)"),
    "no_derived_excessive.csv": (lambda: write_records(without_derived_excessive()),
                                 "raw_headline without derived__memory_l1_wavefronts_shared_excessive (excessive "
                                 "wavefronts computed from memory_l1_wavefronts_shared - _ideal)"),
    "long_preamble.csv": (long_preamble, "60 lines of the capture's ncu.log before raw_trimmed"),
    "shared_short_name.csv": (lambda: write_records(shared_short_name()),
                              "raw_trimmed with launches 0-1 renamed to two instantiations of one template "
                              "(transpose_tile<float, (int)32, (int)8> and <..., (int)32>)"),
    "details_missing_cell.csv": (lambda: write_records(details_missing_cell()),
                                 "details_trimmed with the unit cell of launch 1's Duration row deleted"),
    "empty.csv": (lambda: b"", "an empty file"),
    "empty.ncu-rep": (lambda: b"", "an empty file"),
    "not_a_report.ncu-rep": (lambda: b"This is a text file, not an Nsight Compute report.\n",
                             "a text file with the .ncu-rep suffix"),
    "truncated.ncu-rep": (rep_prefix, "the first 64 KB of profile.ncu-rep (a copy cut short)"),
    "other_format.ncu-rep": (rep_other_format,
                             "truncated.ncu-rep with the format version set to 99, as a much newer ncu might write"),
}


def readme() -> bytes:
    lines = [
        "# tests/data/bad: small bad and quirky inputs",
        "",
        "Written by `python3 scripts/make_bad_inputs.py` from the real capture in",
        "`tests/data/h200_f32_4096/` (H200, ncu 2025.3.1, `--set full`). Each file is that capture",
        "trimmed or altered in the one way stated below; none of it is a measurement of its own.",
        "`python3 scripts/make_bad_inputs.py --check` fails when a file here no longer matches the script.",
        "",
        "| file | what it is |",
        "| --- | --- |",
    ]
    lines += [f"| `{name}` | {what} |" for name, (_, what) in FILES.items()]
    return ("\n".join(lines) + "\n").encode()


def build() -> dict[str, bytes]:
    out = {name: make() for name, (make, _) in FILES.items()}
    out["README.md"] = readme()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = p.parse_args(argv)
    files = build()
    if args.check:
        stale = [n for n, data in files.items() if not (OUT / n).is_file() or (OUT / n).read_bytes() != data]
        for n in stale:
            print(f"stale: tests/data/bad/{n}", file=sys.stderr)
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        tmp = OUT / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(OUT / name)
    print(f"wrote {len(files)} files to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
