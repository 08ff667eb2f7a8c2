"""The ``bench`` and ``sweep`` commands' work, from their options to the files they write: the
sweep points of a case, run in-process or over Dask (:mod:`.fanout`), gathered, written as one
JSON (and, for the profiled sweep, one report). Each returns a :class:`Outcome` (what the command
prints, and its warnings); the command only prints it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_report.errors import InputError
from profiler_report.live import fanout
from profiler_report.model.registry import DEFAULT_CASE, get_case
from profiler_report.util.fsio import write_json

#: The repository (or installed package's) root: the commit the points are stored under.
_ROOT = Path(__file__).resolve().parents[2]

Progress = Callable[[fanout.PointResult], None]


@dataclass
class Outcome:
    """What a sweep command prints: ``lines`` (stdout), ``warnings`` (stderr, each "warning: ...")
    and ``notes`` (stderr, each "note: ...": resume-store files that could not be used)."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class BenchOptions:
    """``bench``'s options: the JSON file, quick (one size), event-timed launches per entry, the
    case, the Dask cluster (``cluster`` "local" or a ``scheduler`` address; neither: in-process)
    and ``fresh`` (run every point again instead of reusing those this commit finished)."""

    out: Path = Path("bench.json")
    quick: bool = False
    repeats: int = 30
    case_name: str = DEFAULT_CASE
    cluster: str | None = None
    scheduler: str | None = None
    fresh: bool = False


def progress_line(res: fanout.PointResult) -> str:
    """One line per finished point of a sweep: where it ran, or why it failed."""
    where = f"{res.where.get('host', '')} GPU {res.where.get('gpu_index', '?')}"
    text = f"{res.status} in {res.wall_s:.1f} s on {where}" if res.status == "ok" else f"FAILED: {res.reason}"
    return f"point {res.point.label()}: {text}"


def _failed_warnings(results: list[fanout.PointResult], where: str) -> list[str]:
    failed = [res for res in results if res.status != "ok"]
    return [f"{len(failed)} of {len(results)} points failed (listed in {where}; run the same command again to "
            "retry them)"] if failed else []


def run_bench(opts: BenchOptions, progress: Progress) -> Outcome:
    """Time every point of the case's benchmark (its stages against memcpy, its ceilings and peers),
    write ``opts.out``: the rows, the provenance and ``sweep`` (every point's status and where it ran).

    Raises:
        InputError: ``repeats`` below 20, or ``out`` not a writable file path.
    """
    from profiler_report.live.config import RunConfig
    from profiler_report.live.session import git_commit, provenance

    out = opts.out
    if opts.repeats < 20:
        raise InputError(f"--repeats must be at least 20, got {opts.repeats}", "pass --repeats 20 or more")
    if out.is_dir() or not out.name or not out.parent.is_dir() or not os.access(out.parent, os.W_OK):
        raise InputError(f"cannot write the results to {out}", "pass --out FILE.json in a writable folder")
    case = get_case(opts.case_name)
    points = case.sweep_points(opts.case_name, quick=opts.quick, repeats=opts.repeats)
    folder = out.with_name(out.name + ".points")
    if opts.fresh:
        shutil.rmtree(folder, ignore_errors=True)
    store = fanout.PointStore(folder, git_commit(_ROOT), row_type=case.bench_row_type())
    with fanout.dask_client(opts.cluster, opts.scheduler) as client:
        results = fanout.run_sweep(points, client=client, store=store, progress=progress)
    rows = case.bench_rows([r for res in results for r in res.rows])
    record = fanout.sweep_record(results, fanout.engine_name(opts.cluster, opts.scheduler))
    prov = provenance(RunConfig(case=case.name, counters=False), case, None, []) if client is None \
        else cluster_provenance(case, results)
    prov["mode"] = "live run"
    write_json(out, {**case.bench_json(rows, prov), "sweep": record})
    return Outcome([case.bench_table(rows), shape_lines(rows), f"wrote {out}"],
                   [*record["warnings"], *_failed_warnings(results, f"{out} sweep.points")], list(store.notes))


def shape_lines(rows: list[Any]) -> str:
    """The block-shape sweep's verdicts (fastest against chosen shape) and the size sweep's (where
    a peer still wins), as the report words them."""
    from profiler_report.analysis.sweeps import shape_table, shape_verdicts, sweep_table, sweep_verdicts

    dicts = [r.to_dict() for r in rows]
    shapes = shape_table(dicts)
    lines = [f"block-shape sweep {v}" for v in shape_verdicts(shapes)] if not shapes.empty else []
    sweep = sweep_table(dicts) if any("rows" in r and r["kind"] == "stage" for r in dicts) else None
    return "\n".join(lines + ([f"sweep: {v}" for v in sweep_verdicts(sweep)] if sweep is not None else []))


def cluster_provenance(case: Any, results: list[fanout.PointResult]) -> dict[str, Any]:
    """Provenance of a sweep that ran on Dask workers: the client may have no GPU, so the GPU
    fields are those of the first finished point's worker (sweep.points has every point's)."""
    import datetime as dt
    import platform

    from profiler_report.live.session import git_commit

    where = next((r.where for r in results if r.status == "ok"), {})
    return {"mode": "live run", "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "commit": git_commit(_ROOT), "client_host": platform.node(),
            "host": where.get("host", ""), "gpu": where.get("gpu_name", ""), "driver": where.get("gpu_driver", ""),
            "case": case.name, "counters": "unavailable (bench)"}


@dataclass(frozen=True)
class SweepOptions:
    """``sweep``'s options: the case, the stage ids profiled at every point ("" all), the sizes
    (``{dim: n}`` each; [{}]: the case's) and dtypes ([]: the case's first), the folder, the Dask
    cluster, ``shared`` (workers write captures into ``out/captures`` themselves), ``fresh``, ncu's
    path, timeout and ``--clock-control``, and whether the captures are rendered as one report."""

    out: Path
    case_name: str = DEFAULT_CASE
    stages: str = ""
    sizes: tuple[dict[str, int], ...] = ({},)
    dtypes: tuple[str, ...] = ()
    cluster: str | None = None
    scheduler: str | None = None
    shared: bool = False
    fresh: bool = False
    ncu_path: str | None = None
    ncu_timeout: float = 600.0
    clock_control: str = "none"
    report: bool = True


def run_profiled(opts: SweepOptions, progress: Progress) -> Outcome:
    """Profile every point (one ncu process each), write ``out/sweep.json`` and, unless
    ``opts.report`` is off, render the points' captures as one report (``out/report``)."""
    from profiler_report.live import profiled
    from profiler_report.live.session import git_commit

    case, out = get_case(opts.case_name), opts.out
    points = profiled.sweep_points(case, [s for s in opts.stages.split(",") if s], list(opts.sizes) or [{}],
                                   list(opts.dtypes) or [case.default_dtype])
    settings = profiled.ProfileSettings(opts.ncu_path, opts.ncu_timeout, opts.clock_control,
                                        str(profiled.captures_folder(out).resolve()) if opts.shared else "")
    if opts.fresh:
        shutil.rmtree(out / "points", ignore_errors=True)
    with fanout.dask_client(opts.cluster, opts.scheduler) as client:
        if client is None:
            from profiler_report.live.ncu import find_ncu

            find_ncu(opts.ncu_path)  # in-process: no ncu fails once, before any point
        notes: list[str] = []
        results = profiled.run_profiled_sweep(points, out, settings, git_commit(_ROOT), client=client,
                                              progress=progress, notes=notes)
    prov = {**cluster_provenance(case, results), "counters": "collected (ncu --set full)"}
    doc = profiled.sweep_document(case, results, settings, fanout.engine_name(opts.cluster, opts.scheduler), prov)
    write_json(out / "sweep.json", doc)
    outcome = Outcome([f"wrote {out / 'sweep.json'}"],
                      [*doc["sweep"]["warnings"], *_failed_warnings(results, "sweep.json sweep.points")], notes)
    captures = [profiled.captures_folder(out) / f"{profiled.capture_name(r.point)}.ncu-rep"
                for r in results if r.status == "ok"]
    if opts.report and captures:
        from profiler_report.analysis.run import load_run
        from profiler_report.report.build import render_capture

        ladder: Path | list[Path] = captures[0] if len(captures) == 1 else captures
        run = load_run(ladder, case=case, name_by_file=True)  # "vec_deep (4096x4096-float32)"
        render_capture(ladder, out / "report", case=case, force=True, run=run)
        outcome.lines.append(f"report: {out / 'report' / 'index.html'}")
    return outcome
