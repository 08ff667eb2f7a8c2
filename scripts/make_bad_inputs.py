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
