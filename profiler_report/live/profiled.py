"""The profiled sweep: each point is one ncu process on its worker's GPU, exporting its own capture.

A point (:class:`~profiler_report.live.fanout.SweepPoint` with unit :data:`UNIT`) is (case, the
stages, size, dtype); :func:`run_profile_point` runs ``ncu --set full --import-source yes
--clock-control none --nvtx --nvtx-include pr_<case>.<stage>/ ...`` on the stage launcher
(:mod:`profiler_report.live.target`: one launch per stage, and the case's ceiling), checks that
the capture holds every stage (:func:`~profiler_report.live.ncu.check_profiled`) and reads its
headline metrics through the child-process reader (:func:`~profiler_report.analysis.run.load_run`),
on the worker, so reads run side by side. The capture's bytes come back in the result
(``PointResult.files``) unless the workers write into a shared folder. Scheduling, retry,
resume and where each point ran are :func:`~profiler_report.live.fanout.run_sweep`'s: one code
path with ``bench``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiler_report.errors import (
    NcuFailedError,
    NcuTimeoutError,
    NoKernelProfiledError,
    ReportUnreadableError,
)
from profiler_report.live.fanout import WHERE_FIELDS, PointResult, SweepPoint, where_am_i
from profiler_report.model.base import Case

#: SweepPoint.unit of a profiled point (its ``stages`` field: the comma-separated stage ids).
UNIT = "profile"

#: Failures of one point (ncu failed or timed out, a stage not in its capture, an unreadable
#: capture): the point is retried, then recorded, and the sweep goes on. The tool's other errors
#: (ncu not found, no counter permission, a bad case) would fail every point alike.
POINT_ERRORS = (NcuFailedError, NcuTimeoutError, NoKernelProfiledError, ReportUnreadableError)


class PointFailed(RuntimeError):
    """One profiled point failed (not an error of the tool): its message is the one-line error."""


@dataclass(frozen=True)
class ProfileSettings:
    """How the workers profile: ``ncu`` the path of ncu there (None: found there as ``run`` finds
    it), ``timeout_s`` per ncu process, ``clock_control`` (``--clock-control``), and ``shared``
    a folder every worker can write (the sweep's captures folder) or "" to send the bytes back."""

    ncu: str | None = None
    timeout_s: float = 600.0
    clock_control: str = "none"
    shared: str = ""


def sweep_points(case: Case, stages: list[str], sizes: list[dict[str, int]], dtypes: list[str]) -> list[SweepPoint]:
    """One point per size x dtype (sizes outer), each profiling ``stages`` ([] for every stage of
    the case's manifest) and the ceiling. Raises InputError for an unknown stage, size or dtype."""
    for s in stages:
        case.manifest.stage(s)
    for d in dtypes:
        case.check_dtype(d)
    return [SweepPoint(case.ref, UNIT, tuple(case.size(size).items()), d, stages=",".join(stages), peers=False,
                       repeats=0) for size in sizes for d in dtypes]


def capture_name(point: SweepPoint) -> str:
    """'4096x4096-float32': the point's capture is ``<name>.ncu-rep`` (its size and dtype; one
    sweep's points share their stages)."""
    return "x".join(str(v) for _, v in point.size) + f"-{point.dtype}"


def profiled_ids(case: Case, point: SweepPoint) -> list[str]:
    """The stage ids ncu profiles for ``point``: its stages (every stage when empty), then the ceiling."""
    ids = [s for s in point.stages.split(",") if s] or [s.id for s in case.manifest.stages]
    return [*ids, case.manifest.ceiling.id]


def headline_rows(report: Path, point: SweepPoint, ids: list[str]) -> list[dict[str, Any]]:
    """One row per stage of ``ids`` in ``report`` (the stages ncu was asked for; check_profiled
    has made sure each is there), in launch order: the point's capture name, size and dtype, then
    the stage's entry of the summary JSON (``summary --format json``'s ``stages``: every headline
    column, NaN as null; the columns' units and ncu sources are in that schema).

    Raises:
        ReportUnreadableError: the capture cannot be read.
    """
    from profiler_report.analysis.run import load_run
    from profiler_report.analysis.summary import summary_json

    stages = json.loads(summary_json(load_run(report).analysis))["stages"]
    head = {"capture": capture_name(point) + ".ncu-rep", "size": " ".join(f"{k}={v}" for k, v in point.size),
            "dtype": point.dtype}
    return [{**head, **s} for s in stages if s["stage"] in ids]


def run_profile_point(point: SweepPoint, settings: ProfileSettings) -> PointResult:
    """Profile ``point`` with one ncu process on this process's GPU; runs on a Dask worker or in-process.

    Returns its headline rows (with WHERE_FIELDS), where it ran, and the capture and ncu log as
    ``files`` ({} when ``settings.shared``: they are written there as ``<name>.ncu-rep`` and
    ``<name>.ncu.log``, atomically).

    Raises:
        PointFailed: ncu failed or timed out, a stage is missing from its capture, or the capture
            cannot be read (the one-line error as its message).
        NcuNotFoundError, CounterPermissionError, InputError: as ``run`` raises them.
    """
    from profiler_report.live import ncu as prof
    from profiler_report.model.ranges import nvtx_range_name
    from profiler_report.model.registry import get_case

    t0 = time.perf_counter()
    case = get_case(point.case)
    ids = profiled_ids(case, point)
    ncu = prof.find_ncu(settings.ncu)
    name = capture_name(point)
    home = Path(settings.shared) if settings.shared else Path(tempfile.gettempdir())
    home.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=home))
    try:
        cmd = prof.NcuCommand(ncu=ncu, export=work / "profile",
                              target=prof.target_command(case.ref, point.dims, point.dtype, ids),
                              ranges=[nvtx_range_name(case.name, i) for i in ids],
                              clock_control=settings.clock_control)
        try:
            output = prof.run_ncu(cmd, settings.timeout_s, log=lambda _: None, log_path=work / "ncu.log")
            prof.check_profiled(cmd, ids, output)
            rows = headline_rows(work / "profile.ncu-rep", point, ids)
        except POINT_ERRORS as exc:
            raise PointFailed(exc.one_line()) from None
        outputs = {f"{name}.ncu-rep": work / "profile.ncu-rep", f"{name}.ncu.log": work / "ncu.log"}
        if settings.shared:
            for dest, src in outputs.items():
                os.replace(src, home / dest)
            files = {}
        else:
            files = {dest: src.read_bytes() for dest, src in outputs.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    where = where_am_i()
    for r in rows:
        r.update({k: where[k] for k in WHERE_FIELDS})
    return PointResult(point, rows, where, seconds=time.perf_counter() - t0, files=files)


def captures_folder(out: Path) -> Path:
    """Where a sweep in folder ``out`` keeps its points' captures (and their ncu logs)."""
    return out / "captures"


def run_profiled_sweep(points: list[SweepPoint], out: Path, settings: ProfileSettings, commit: str, *,
                       client: Any = None, progress: Any = None) -> list[PointResult]:
    """Run ``points`` through :func:`~profiler_report.live.fanout.run_sweep` (``client`` None:
    in-process) and keep each finished point's capture in ``out/captures/`` (written from the bytes
    that came back, atomically, or by the workers themselves with ``settings.shared``) and its
    result in ``out/points/`` (keyed by ``commit``), so running it again resumes; a point whose
    capture is gone runs again. Returns the results in the points' order."""
    from functools import partial

    from profiler_report.live.fanout import PointStore, run_sweep
    from profiler_report.util.fsio import atomic_write

    folder = captures_folder(out)
    folder.mkdir(parents=True, exist_ok=True)

    def keep(res: PointResult) -> None:
        for name, data in res.files.items():
            atomic_write(folder / name, data)
        res.files = {}

    store = PointStore(out / "points", commit, needs=lambda p: [folder / f"{capture_name(p)}.ncu-rep"])
    return run_sweep(points, partial(run_profile_point, settings=settings), client=client, store=store,
                     progress=progress, gather=keep)


def sweep_document(case: Case, results: list[PointResult], settings: ProfileSettings, engine: str,
                   provenance: dict[str, Any]) -> dict[str, Any]:
    """sweep.json: ``rows`` (every ok point's headline rows, in the points' order: see
    :func:`headline_rows`), ``columns`` (each column's unit and ncu source), ``sweep``
    (fanout.sweep_record: every point's status, reason, attempts, where it ran, seconds and
    wall_s; warnings on mixed GPUs), how ncu ran, provenance."""
    from profiler_report.analysis.summary import summary_columns
    from profiler_report.live.fanout import sweep_record

    return {"schema": "profiler-report.sweep/1", "case": case.name, "section_set": "full",
            "clock_control": settings.clock_control, "provenance": provenance, "columns": summary_columns(),
            "rows": [r for res in results if res.status == "ok" for r in res.rows],
            "sweep": sweep_record(results, engine)}
