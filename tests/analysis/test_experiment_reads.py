"""analysis.experiments.start_experiment_reads: ``render`` starts reading the experiments' captures
beside the main capture's, for the case provenance.json names (or ``--case``), and the tables made
from those reads are the ones made from reading the files then."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import DATA

from profiler_report.analysis.experiments import EXPERIMENT_READ_NICE, experiment_tables, start_experiment_reads
from profiler_report.model.registry import get_case

CASE = get_case("transpose")
#: The padding sweep's own recorded capture (tests/data/README.md).
SWEEP = DATA / "h200_padding_sweep"


def _folder(tmp_path: Path, provenance: str | None) -> Path:
    """A report folder holding the padding sweep's capture and sidecar, and ``provenance`` as provenance.json."""
    for name in ("padding_sweep.ncu-rep", "padding_sweep.json"):
        shutil.copyfile(SWEEP / name, tmp_path / name)
    if provenance is not None:
        (tmp_path / "provenance.json").write_text(provenance)
    return tmp_path


def test_the_case_provenance_names_has_its_experiments_read_early(tmp_path: Path) -> None:
    folder = _folder(tmp_path, json.dumps({"case": "transpose"}))
    reads = start_experiment_reads(folder)
    try:
        assert list(reads) == [folder / "padding_sweep.ncu-rep"]
        (early,) = experiment_tables(CASE, folder, reads)
    finally:
        for read in reads.values():
            read.close()
    (late,) = experiment_tables(CASE, folder)
    assert early.recorded and early == late


def test_case_given_is_used_and_a_read_not_wanted_is_closed(tmp_path: Path) -> None:
    folder = _folder(tmp_path, None)  # no provenance.json: --case says it
    (read,) = start_experiment_reads(folder, CASE).values()
    read.close()  # what render does with a read it did not use
    assert all(proc.returncode is not None for proc in read._procs)


@pytest.mark.parametrize("provenance", [None, "{not json", "[]", json.dumps({"case": "no_such_case"}),
                                        json.dumps({"case": "reduction"})],
                         ids=["none", "not-json", "not-an-object", "unknown-case", "case-without-experiments"])
def test_no_case_or_no_experiments_starts_no_read(tmp_path: Path, provenance: str | None) -> None:
    assert start_experiment_reads(_folder(tmp_path, provenance)) == {}


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here")
def test_an_experiment_read_runs_below_the_main_one(tmp_path: Path) -> None:
    folder = _folder(tmp_path, json.dumps({"case": "transpose"}))
    (read,) = start_experiment_reads(folder).values()
    try:
        pid, ours = read._procs[0].pid, os.getpriority(os.PRIO_PROCESS, 0)
        deadline = time.monotonic() + 10
        while os.getpriority(os.PRIO_PROCESS, pid) == ours and time.monotonic() < deadline:
            time.sleep(0.01)  # the child lowers its own priority as it starts
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(ours + EXPERIMENT_READ_NICE, 19)
    finally:
        read.close()
