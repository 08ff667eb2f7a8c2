"""Mutations of the real H200 raw-page export (tests/data/h200_f32_4096/raw.csv, ncu 2025.3.1
--set full) written to tmp_path, each altered in one stated way, as scripts/make_bad_inputs.py
alters its inputs. Nothing here is measured."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from conftest import F32

RAW = F32 / "raw.csv"
KERNEL = "Kernel Name"
RANGE = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"


class Raw:
    """raw.csv as records: ``header``, ``units`` and one list per launch (``rows``)."""

    def __init__(self, path: Path = RAW) -> None:
        records = list(csv.reader(io.StringIO(path.read_text())))
        self.header, self.units, self.rows = records[0], records[1], records[2:]

    def col(self, name: str) -> int:
        return self.header.index(name)

    def row(self, short: str) -> list[str]:
        """The launch whose kernel is ``transpose_<short>`` (or ``copy_tiled`` for "copy")."""
        want = "copy_tiled" if short == "copy" else f"transpose_{short}<"
        [hit] = [r for r in self.rows if want in r[self.col(KERNEL)]]
        return hit

    def drop_launches(self, *shorts: str) -> Raw:
        gone = [self.row(s) for s in shorts]
        self.rows = [r for r in self.rows if r not in gone]
        return self

    def drop_column(self, name: str) -> Raw:
        i = self.col(name)
        for rec in (self.header, self.units, *self.rows):
            del rec[i]
        return self

    def set(self, short: str, column: str, value: str) -> Raw:
        self.row(short)[self.col(column)] = value
        return self

    def write(self, path: Path) -> Path:
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([self.header, self.units, *self.rows])
        path.write_text(buf.getvalue())
        return path
