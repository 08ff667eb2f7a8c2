"""Command line: ``profiler-report run | render | summary`` (and the checks).

Every error the tool knows about is printed as one line with its fix, and exits with the code
listed in ``profiler-report --help``; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import re
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .errors import InputError, ProfilerReportError, exit_codes_help
from .util.dtypes import ALL_DTYPES
from .util.fsio import require_folder_path

if TYPE_CHECKING:
    pass

#: The ``Exit codes:`` epilog of the top-level ``--help``, from :data:`errors.EXIT_CODE_TABLE`.
EXIT_CODES = exit_codes_help()
#: Each subcommand's epilog: the table once, in the top-level help, is enough.
SEE_EXIT_CODES = "Exit codes: see `profiler-report --help`."

#: Most processes drawing charts for ``render``: a page has about a dozen, the slowest ~0.4 s.
CHART_WORKERS = 8


def parse_stage_labels(values: tuple[str, ...], option: str = "--stage") -> list[tuple[str, str]]:
    """``LABEL=REGEX`` options -> [(label, regex)].

    Raises:
        InputError: an option lacks ``=`` or has an empty label.
    """
    out = []
    for v in values:
        label, sep, pattern = v.partition("=")
        if not sep or not label.strip() or not pattern:
            raise InputError(f"{option} {v!r} is not LABEL=REGEX", f"e.g. {option} naive=transpose_naive")
        out.append((label.strip(), pattern))
    return out


def parse_dims(values: tuple[str, ...], option: str = "--size") -> dict[str, int]:
    """``DIM=N`` options -> {dim: n}.

    Raises:
        InputError: an option is not DIM=N with N an integer, or gives a dimension a second,
            different value.
    """
    out: dict[str, int] = {}
    for v in values:
        dim, sep, n = v.partition("=")
        if not sep or not dim.strip() or not re.fullmatch(r"[0-9]+", n.strip()):  # isdigit() takes '²'
            raise InputError(f"{option} {v!r} is not DIM=N with N >= 0",
                             f"one {option} per dimension, e.g. {option} rows=4096 {option} cols=8192")
        dim = dim.strip()
        if dim in out and out[dim] != int(n):
            raise InputError(f"{option} gives {dim} twice: {out[dim]} and {int(n)}", f"give {dim} once")
        out[dim] = int(n)
    return out


def sized(values: tuple[str, ...], option: str, **named: int | None) -> dict[str, int]:
    """``DIM=N`` options of ``option`` merged with the named ones (``--rows``/``--cols``, or with
    ``option`` ``--profile-size`` ``--profile-rows``/``--profile-cols``) -> {dim: n}.

    Raises:
        InputError: as :func:`parse_dims`, or a dimension given both ways with different values.
    """
    dims = parse_dims(values, option)
    prefix = option[2:].removesuffix("size")
    for dim, n in named.items():
        if n is None:
            continue
        if dim in dims and dims[dim] != n:
            raise InputError(f"{option} {dim}={dims[dim]} and --{prefix}{dim} {n} disagree",
                             f"give {dim} once: --{prefix}{dim} or {option} {dim}=N")
        dims[dim] = n
    return dims


def gpu_slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200'."""
    s = re.sub(r"(?i)^nvidia\s+", "", name).lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-") or "gpu"


@click.group(epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="profiler-report")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Turn Nsight Compute captures into a staged optimization report.

    Pipeline: run -> profile -> extract -> analyze -> render / check.
    """
    ctx.obj = {"debug": debug}


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--case", "case_name", default="transpose", show_default=True,
              help="The case study: a built-in name, or the path of a case folder (`new-case DIR` makes one).")
@click.option("--rows", type=int, default=None, help="transpose: rows of the input matrix (default 8192).")
@click.option("--cols", type=int, default=None, help="transpose: columns of the input matrix (default 8192).")
@click.option("--size", "size_opts", multiple=True, metavar="DIM=N",
              help="A dimension of the case's size (any case), e.g. --size rows=4096. Repeatable.")
@click.option("--dtype", default=None, type=click.Choice(list(ALL_DTYPES)),
              help="Element type (default: float32, or the first dtype the case runs in).")
@click.option("--profile-rows", type=int, default=None, help="transpose: rows under ncu (default: --rows).")
@click.option("--profile-cols", type=int, default=None, help="transpose: columns under ncu (default: --cols).")
@click.option("--profile-size", "profile_opts", multiple=True, metavar="DIM=N",
              help="A dimension under ncu (default: the timing size). Repeatable.")
@click.option("--repeats", default=30, show_default=True, help="Event-timed launches per stage (>= 20).")
@click.option("--stages", default="", help="Comma-separated stage ids (default: all in kernels/<case>/stages.toml, "
              "and then the case's experiments too, e.g. the transpose's padding sweep).")
@click.option("--clock-control", default="none", show_default=True, type=click.Choice(["none", "base"]),
              help="ncu --clock-control; 'none' leaves the GPU clocks alone.")
@click.option("--ncu", "ncu_path", default=None, help="Path of ncu (default: PATH, then the usual install folders).")
@click.option("--ncu-timeout", default=600.0, show_default=True, help="Seconds before ncu is stopped.")
@click.option("--no-counters", is_flag=True, help="Skip ncu: validate and event-time only.")
@click.option("--sanitize/--no-sanitize", default=None,
              help="First run every stage once under compute-sanitizer (memcheck, racecheck, synccheck) at a "
                   "small odd size (the transpose: 67x133); a finding marks the stage wrong. Default: on where "
                   "compute-sanitizer exists (else the report says 'not available'); --sanitize without it is an "
                   "error (exit 11).")
@click.option("--sanitize-timeout", default=600.0, show_default=True, help="Seconds each sanitizer tool may take.")
@click.option("--peers/--no-peers", default=True, show_default=True,
              help="Also time the case's peer libraries at the same size (bench.json; the transpose: cupy, "
                   "cuBLAS, torch, Triton, JAX). A case without peers skips them.")
@click.option("--sweep", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Include a `profiler-report bench` JSON (size/dtype sweep) in the report.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Report folder (default: reports/<gpu>-<yyyymmdd>; other cases reports/<gpu>-<case>-<yyyymmdd>).")
@click.pass_context
def run(ctx: click.Context, case_name: str, rows: int | None, cols: int | None, size_opts: tuple[str, ...],
        dtype: str | None, profile_rows: int | None, profile_cols: int | None, profile_opts: tuple[str, ...],
        repeats: int, stages: str, clock_control: str, ncu_path: str | None, ncu_timeout: float,
        no_counters: bool, sanitize: bool | None, sanitize_timeout: float, peers: bool, sweep: Path | None,
        out: Path | None) -> None:
    """Validate, time and profile every stage of a case on this GPU, then render the report."""
    from profiler_report.live.config import RunConfig
    from profiler_report.live.gpu import device_info
    from profiler_report.live.session import live_run
    from profiler_report.model.registry import get_case
    from profiler_report.report.build import render_capture
    from profiler_report.util.timer import StepTimer, log

    case = get_case(case_name)
    dtype = case.check_dtype(dtype or case.default_dtype)
    size = case.size(sized(size_opts, "--size", rows=rows, cols=cols))
    if out is not None:
        require_folder_path(out)  # before any GPU work: a file given as --out is never moved aside
    psize = case.size({**size, **sized(profile_opts, "--profile-size", rows=profile_rows, cols=profile_cols)})
    cfg = RunConfig(case=case.ref, size=size, profile_size=psize, dtype=dtype, repeats=repeats,
                    clock_control=clock_control, ncu=ncu_path, ncu_timeout_s=ncu_timeout,
                    counters=not no_counters, stages=[s for s in stages.split(",") if s],
                    sanitize=sanitize, sanitize_timeout_s=sanitize_timeout)
    case.manifest.run_stages(cfg.stages)  # before the GPU is asked for: bad input, not a missing GPU
    if sweep is not None:
        from profiler_report.capture.sidecars import read_sweep

        read_sweep(sweep)
    if out is None:
        named = "" if case.name == "transpose" else f"{case.name}-"  # a user's case: its own folder
        out = Path("reports") / f"{gpu_slug(device_info()['gpu'])}-{named}{dt.date.today():%Y%m%d}"
    timer = StepTimer()

    def render(folder: Path) -> None:
        if (folder / "profile.ncu-rep").is_file():
            render_capture(folder / "profile.ncu-rep", folder, live=True, capture_label=str(out / "profile.ncu-rep"),
                           case=case)
        else:
            from profiler_report.report.build import render_timings_only

            render_timings_only(folder, case=case)

    try:
        live_run(cfg, out, render=render, timer=timer, peers=peers, sweep=sweep)
    finally:
        if timer.steps:  # nothing ran when an error came first: keep its one line alone
            log(timer.table())
    click.echo(f"report: {out / 'index.html'}")


def _ladder_options(fn: Any = None, *, gate: bool = False) -> Any:
    """``--stage``, ``--ceiling`` and ``--case``: how a capture's launches become a ladder (``gate``:
    for ``check``, whose --case also picks the thresholds)."""
    if fn is None:
        return lambda f: _ladder_options(f, gate=gate)
    gates = " `check` then gates on the case's thresholds.toml unless --thresholds is given." if gate else ""
    for opt in reversed((
        click.option("--stage", "stage_opts", multiple=True, metavar="LABEL=REGEX",
                     help="Name a stage: launches whose kernel name (short, C++ display or mangled) or NVTX "
                          "range matches REGEX. Repeatable; "
                          "without it every launch is a stage, in launch order (one capture per file: the "
                          "file's name). An option that matches nothing is an error."),
        click.option("--ceiling", "ceiling_opts", multiple=True, metavar="LABEL=REGEX",
                     help="Mark reference launches (a copy) as a ceiling: drawn as one, never a stage nor the "
                          "baseline. Repeatable."),
        click.option("--allow-mixed", is_flag=True,
                     help="Accept a ladder of captures that are not comparable (GPU, size, dtype: the check of "
                          "`diff --strict`): shown side by side, with no ratio between two captures. Default: exit 2."),
        click.option("--case", "case_ref", default=None,
                     help="The case that made the capture: a case folder (or built-in name); default: from "
                          "its NVTX ranges and provenance.json." + gates),
    )):
        fn = opt(fn)
    return fn


def _ladder(stage_opts: tuple[str, ...], ceiling_opts: tuple[str, ...], case_ref: str | None) -> dict[str, Any]:
    """load_run's keyword arguments for the ladder options."""
    from profiler_report.model.registry import get_case

    return {"labels": parse_stage_labels(stage_opts) or None,
            "ceilings": parse_stage_labels(ceiling_opts, "--ceiling") or None,
            "case": get_case(case_ref) if case_ref else None}


def _one_or_many(paths: tuple[Path, ...]) -> Path | list[Path]:
    return paths[0] if len(paths) == 1 else list(paths)


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--from", "captures", required=True, multiple=True, type=click.Path(path_type=Path),
              help="A .ncu-rep (any capture, not only ours) or a raw-page CSV export. Repeat it for a ladder "
                   "kept as one capture per version: stages in the order given.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: <first capture's folder>/rendered).")
@_ladder_options
@click.option("--expect", type=click.Path(path_type=Path), default=None,
              help="A stages.toml-format file of expected effects ([[stage]] id = LABEL, expect = [...]) to "
                   "judge on the labelled stages of a capture made elsewhere.")
@click.option("--baseline", type=click.Path(path_type=Path), default=None,
              help="An earlier capture: add a per-stage comparison with it to the report.")
@click.option("--strict", is_flag=True, help="Exit 2 when the capture and --baseline are not comparable.")
@click.option("--force", is_flag=True, help="Write into --out even when it holds a live run's report.")
@click.option("--stages", "want", default="", metavar="ID,ID,...",
              help="The stages of the capture's case it must hold (default: every stage between its first and "
                   "last). A capture lacking one is rendered, the page names what is missing, and render exits 5.")
def render(captures: tuple[Path, ...], out: Path | None, stage_opts: tuple[str, ...], ceiling_opts: tuple[str, ...],
           allow_mixed: bool, case_ref: str | None, expect: Path | None, baseline: Path | None, strict: bool,
           force: bool, want: str) -> None:
    """Render the staged HTML report from existing captures (no GPU needed)."""
    from profiler_report.capture.readahead import start_read
    from profiler_report.report.guard import refuse_live_overwrite

    ladder = {**_ladder(stage_opts, ceiling_opts, case_ref), "allow_mixed": allow_mixed}
    out = out or captures[0].parent / "rendered"
    if not force:
        refuse_live_overwrite(out)  # before the reads start: a refusal costs nothing
    # ncu_report reads in child processes while this one imports pandas, matplotlib and jinja2.
    pending = [start_read(c) for c in captures]
    try:
        analysis, files = _render_pending(_one_or_many(captures), out, ladder, expect, baseline, strict,
                                          pending[0] if len(pending) == 1 else pending)
    finally:
        for p in pending:
            if p is not None:
                p.close()
    for f in files:
        click.echo(f"wrote {f}")
    from profiler_report.analysis.coverage import require_stages

    require_stages(analysis.coverage, [s.strip() for s in want.split(",") if s.strip()] or None, str(out))


def _render_pending(capture: Path | list[Path], out: Path, ladder: dict[str, Any], expect: Path | None,
                    baseline: Path | None, strict: bool, pending: Any) -> tuple[Any, list[Path]]:
    """``render``'s work once the reads are started; logs where the time went."""
    from profiler_report.capture.readahead import usable_cpus
    from profiler_report.util.timer import StepTimer, log

    timer = StepTimer(progress=False)  # on failure the error line must stay alone
    with timer.step("import"):
        from profiler_report.report.build import render_capture
        from profiler_report.report.charts import pyplot

        pyplot()
        # The imports' objects live until exit: spare the collector walking them again, at exit
        # above all (~0.25 s on 2 CPUs), and the forked chart workers copying the pages it touches.
        gc.freeze()
    from profiler_report.analysis.run import load_run, refuse_mixed

    workers = min(usable_cpus(), CHART_WORKERS)
    allow_mixed = ladder.pop("allow_mixed", False)
    with timer.step("read"):
        run = load_run(capture, pending=pending, expect=expect, **ladder)
    refuse_mixed(run, allow_mixed)
    analysis, files, diffs = render_capture(capture, out, baseline=baseline, strict=strict, timer=timer,
                                            chart_workers=workers, expect=expect, force=True, run=run,
                                            **ladder)  # refuse_live_overwrite: checked before
    if baseline is not None:
        _warn_not_comparable(baseline, capture, diffs)
    log(timer.table())
    return analysis, files


@main.command(epilog=SEE_EXIT_CODES)
@click.argument("captures", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", default="csv", show_default=True, type=click.Choice(["csv", "json", "markdown"]),
              help="csv: every column; json: the schema of the report's summary.json (columns with units and "
                   "sources, stages, expectations, deltas); markdown: the report's summary table, for "
                   "$GITHUB_STEP_SUMMARY.")
@_ladder_options
def summary(captures: tuple[Path, ...], fmt: str, stage_opts: tuple[str, ...], ceiling_opts: tuple[str, ...],
            allow_mixed: bool, case_ref: str | None) -> None:
    """Print the per-stage headline table of CAPTURES (.ncu-rep or raw-page .csv), one row per stage;
    several captures are one ladder, in the order given.

    Event-timing columns (event_median_us, event_gbps, pct_of_memcpy, ...) are added when a
    timings.json from a live run sits beside the capture.
    """
    from profiler_report.analysis.run import load_run, refuse_mixed
    from profiler_report.analysis.summary import summary_json

    run = load_run(_one_or_many(captures), **_ladder(stage_opts, ceiling_opts, case_ref))
    refuse_mixed(run, allow_mixed)
    if fmt == "csv":
        click.echo(run.summary.to_csv(index=False), nl=False)
    elif fmt == "json":
        # null: not measured; never NaN or Infinity
        click.echo(summary_json(run.analysis, run.sidecars.sanitizer), nl=False)
    else:
        from profiler_report.report.cells import cell_rules
        from profiler_report.report.markdown import summary_markdown

        click.echo(summary_markdown(run.analysis, _names(_one_or_many(captures)), cell_rules(run.sidecars.validation),
                                    run.case), nl=False)


def _shape_lines(rows: list[Any]) -> str:
    """The block-shape sweep's verdicts (fastest against chosen shape) and the size sweep's (where
    a peer still wins), as the report words them."""
    from dataclasses import asdict

    from profiler_report.report.tables import shape_table, shape_verdicts, sweep_table, sweep_verdicts

    dicts = [asdict(r) for r in rows]
    shapes = shape_table(dicts)
    lines = [f"block-shape sweep {v}" for v in shape_verdicts(shapes)] if not shapes.empty else []
    sweep = sweep_table(dicts) if any("rows" in r and r["kind"] == "stage" for r in dicts) else None
    return "\n".join(lines + ([f"sweep: {v}" for v in sweep_verdicts(sweep)] if sweep is not None else []))


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--out", type=click.Path(path_type=Path), default=Path("bench.json"), show_default=True,
              help="JSON file for the results (render picks up bench.json beside a capture).")
@click.option("--quick", is_flag=True, help="Only 8192x8192 float32 with peers; no sweep.")
@click.option("--repeats", default=30, show_default=True, help="Event-timed launches per entry (>= 20).")
@click.option("--case", "case_name", default="transpose", show_default=True, help="The case study (kernel ladder).")
@click.option("--cluster", type=click.Choice(["local"]), default=None,
              help="Fan the sweep's points out over a dask-cuda LocalCUDACluster: one worker per visible GPU "
                   "(needs the cluster extra).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Fan the sweep's points out over a running Dask cluster, e.g. tcp://host:8786 (one GPU per worker).")
@click.option("--fresh", is_flag=True,
              help="Run every point again; by default points finished by this commit (kept in OUT.points/) are reused.")
def bench(out: Path, quick: bool, repeats: int, case_name: str, cluster: str | None, scheduler: str | None,
          fresh: bool) -> None:
    """Time every stage against memcpy, copy kernels and peer libraries; sweep sizes and dtypes (GPU).

    One task per sweep point (case, size, dtype, configuration): in-process by default, or on the GPUs
    of a Dask cluster (--cluster local, --scheduler ADDRESS). A failed point is retried once, then
    listed with its reason under the JSON's sweep.points; running the command again resumes."""
    import shutil

    from profiler_report.live import fanout
    from profiler_report.live.config import RunConfig
    from profiler_report.live.session import git_commit, provenance
    from profiler_report.model.registry import get_case
    from profiler_report.util.fsio import write_json

    if repeats < 20:
        raise InputError(f"--repeats must be at least 20, got {repeats}", "pass --repeats 20 or more")
    if out.is_dir() or not out.name or not out.parent.is_dir() or not os.access(out.parent, os.W_OK):
        raise InputError(f"cannot write the results to {out}", "pass --out FILE.json in a writable folder")
    case = get_case(case_name)
    points = case.sweep_points(case_name, quick=quick, repeats=repeats)
    folder = out.with_name(out.name + ".points")
    if fresh:
        shutil.rmtree(folder, ignore_errors=True)
    store = fanout.PointStore(folder, git_commit(Path(__file__).resolve().parent.parent),
                              row_type=case.bench_row_type())
    engine = fanout.engine_name(cluster, scheduler)

    with fanout.dask_client(cluster, scheduler) as client:
        results = fanout.run_sweep(points, client=client, store=store, progress=_point_progress)
    for note in store.notes:
        click.echo(f"note: {note}", err=True)
    rows = case.bench_rows([r for res in results for r in res.rows])
    click.echo(case.bench_table(rows))
    click.echo(_shape_lines(rows))
    record = fanout.sweep_record(results, engine)
    for warning in record["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    failed = [res for res in results if res.status != "ok"]
    if failed:
        click.echo(f"warning: {len(failed)} of {len(results)} points failed (listed in {out} sweep.points; "
                   "run the same command again to retry them)", err=True)
    prov = provenance(RunConfig(case=case.name, counters=False), case, None, []) if client is None \
        else _cluster_provenance(case, results)
    prov["mode"] = "live run"
    write_json(out, {**case.bench_json(rows, prov), "sweep": record})
    click.echo(f"wrote {out}")


def _cluster_provenance(case: Any, results: list[Any]) -> dict[str, Any]:
    """Provenance of a sweep that ran on Dask workers: the client may have no GPU, so the GPU
    fields are those of the first finished point's worker (sweep.points has every point's)."""
    import datetime as dt
    import platform

    from profiler_report.live.session import git_commit

    where = next((r.where for r in results if r.status == "ok"), {})
    return {"mode": "live run", "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "commit": git_commit(Path(__file__).resolve().parent.parent), "client_host": platform.node(),
            "host": where.get("host", ""), "gpu": where.get("gpu_name", ""), "driver": where.get("gpu_driver", ""),
            "case": case.name, "counters": "unavailable (bench)"}


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--case", "case_name", default="transpose", show_default=True, help="The case study (kernel ladder).")
@click.option("--stages", default="", help="Comma-separated stage ids profiled at every point (default: all); the "
              "case's ceiling is always added.")
@click.option("--size", "sizes", multiple=True, metavar="DIM=N[,DIM=N]",
              help="One size of the sweep, e.g. --size rows=4096,cols=4096. Repeatable (default: the case's).")
@click.option("--dtype", "dtypes", multiple=True, type=click.Choice(list(ALL_DTYPES)),
              help="One dtype of the sweep. Repeatable (default: the case's first).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder: sweep.json, captures/<size>-<dtype>.ncu-rep, points/ (for resume), report/index.html.")
@click.option("--cluster", type=click.Choice(["local"]), default=None,
              help="One ncu process per point on a dask-cuda LocalCUDACluster: one worker per visible GPU.")
@click.option("--scheduler", default=None, metavar="ADDRESS", help="One ncu process per point on a running Dask "
              "cluster, e.g. tcp://host:8786 (one GPU per worker).")
@click.option("--shared", is_flag=True, help="The workers write their captures straight into OUT/captures (a "
              "folder they all see); default: the capture bytes come back to this process.")
@click.option("--fresh", is_flag=True, help="Run every point again (default: reuse those this commit finished).")
@click.option("--ncu", "ncu_path", default=None, help="Path of ncu on the workers (default: found as `run` does).")
@click.option("--ncu-timeout", default=600.0, show_default=True, help="Seconds before one point's ncu is stopped.")
@click.option("--clock-control", default="none", show_default=True, type=click.Choice(["none", "base"]),
              help="ncu --clock-control; 'none' leaves the GPU clocks alone.")
@click.option("--report/--no-report", default=True, show_default=True, help="Render the points' captures as one "
              "report (OUT/report/index.html).")
def sweep(case_name: str, stages: str, sizes: tuple[str, ...], dtypes: tuple[str, ...], out: Path,
          cluster: str | None, scheduler: str | None, shared: bool, fresh: bool, ncu_path: str | None,
          ncu_timeout: float, clock_control: str, report: bool) -> None:
    """Profile a sweep: one ncu process (--set full) per point (stages x size x dtype), each
    exporting its own capture; in-process by default, or one task per point on the GPUs of a Dask
    cluster. Writes one sweep.json (each point's headline metrics and where it ran) and one report.
    A failed point is retried once, then listed with its reason; running the command again resumes."""
    import shutil

    from profiler_report.live import fanout, profiled
    from profiler_report.live.session import git_commit
    from profiler_report.model.registry import get_case
    from profiler_report.util.fsio import write_json

    case = get_case(case_name)
    points = profiled.sweep_points(case, [s for s in stages.split(",") if s],
                                   [parse_dims(tuple(s.split(","))) for s in sizes] or [{}],
                                   list(dtypes) or [case.default_dtype])
    settings = profiled.ProfileSettings(ncu_path, ncu_timeout, clock_control,
                                        str(profiled.captures_folder(out).resolve()) if shared else "")
    if fresh:
        shutil.rmtree(out / "points", ignore_errors=True)
    with fanout.dask_client(cluster, scheduler) as client:
        if client is None:
            from profiler_report.live.ncu import find_ncu

            find_ncu(ncu_path)  # in-process: no ncu fails once, before any point
        notes: list[str] = []
        results = profiled.run_profiled_sweep(points, out, settings, git_commit(Path(__file__).resolve().parent.parent),
                                              client=client, progress=_point_progress, notes=notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    prov = {**_cluster_provenance(case, results), "counters": "collected (ncu --set full)"}
    doc = profiled.sweep_document(case, results, settings, fanout.engine_name(cluster, scheduler), prov)
    for warning in doc["sweep"]["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    failed = [res for res in results if res.status != "ok"]
    if failed:
        click.echo(f"warning: {len(failed)} of {len(results)} points failed (listed in sweep.json sweep.points; "
                   "run the same command again to retry them)", err=True)
    write_json(out / "sweep.json", doc)
    click.echo(f"wrote {out / 'sweep.json'}")
    captures = [profiled.captures_folder(out) / f"{profiled.capture_name(r.point)}.ncu-rep"
                for r in results if r.status == "ok"]
    if report and captures:
        from profiler_report.analysis.run import load_run
        from profiler_report.report.build import render_capture

        run = load_run(_one_or_many(captures), case=case, name_by_file=True)  # "vec_deep (4096x4096-float32)"
        render_capture(_one_or_many(captures), out / "report", case=case, force=True, run=run)
        click.echo(f"report: {out / 'report' / 'index.html'}")


def _point_progress(res: Any) -> None:
    """One line per finished point of a sweep: where it ran, or why it failed."""
    where = f"{res.where.get('host', '')} GPU {res.where.get('gpu_index', '?')}"
    text = f"{res.status} in {res.wall_s:.1f} s on {where}" if res.status == "ok" else f"FAILED: {res.reason}"
    click.echo(f"point {res.point.label()}: {text}", err=res.status != "ok")


def _warn_not_comparable(old: Path | list[Path], new: Path | list[Path], diffs: list[str]) -> None:
    if diffs:
        click.echo(f"warning: {_names(old)} and {_names(new)} are not comparable: {'; '.join(diffs)} "
                   "(--strict refuses)", err=True)


def _no_other_cases_thresholds(run: Any, own: Path | None) -> None:
    """./thresholds.toml is the transpose's gate (or a capture made elsewhere's): a capture that
    another case made and that has no thresholds.toml of its own is not gated on it.

    Raises:
        InputError: the capture's provenance names another case and none of its thresholds is known.
    """
    made_by = str(run.provenance.get("case", "transpose"))
    if own is not None or made_by == "transpose":
        return
    folder = run.provenance.get("case_dir")
    raise InputError(f"{run.path} was made by case {made_by!r}, which has no thresholds.toml here "
                     "(./thresholds.toml gates the transpose)",
                     "pass --thresholds FILE" + (f", or --case {folder} if its folder has one" if folder else ""))


@main.command(epilog=SEE_EXIT_CODES)
@click.argument("captures", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--thresholds", "thresholds_path", type=click.Path(path_type=Path), default=None,
              help="Thresholds file (default: the capture's case's kernels/<case>/thresholds.toml where it has "
                   "one, else ./thresholds.toml for a transpose capture or one made elsewhere).")
@click.option("--baseline", type=click.Path(path_type=Path), default=None,
              help="An earlier capture, for rules relative to 'baseline'.")
@click.option("--missing", type=click.Choice(["fail", "warn"]), default="fail", show_default=True,
              help="Whether a rule whose metric is not measured fails the check or only warns.")
@click.option("--junit", type=click.Path(path_type=Path), default=None,
              help="Also write JUnit XML here (one test case per rule and stage).")
@click.option("--format", "fmt", default="table", show_default=True, type=click.Choice(["table", "json", "markdown"]),
              help="table: plain text; json: for scripts; markdown: for $GITHUB_STEP_SUMMARY or a PR comment.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--strict", is_flag=True, help="Exit 2 when CAPTURES and --baseline are not comparable.")
@_ladder_options(gate=True)
def check(captures: tuple[Path, ...], thresholds_path: Path | None, baseline: Path | None, missing: str,
          junit: Path | None, fmt: str, as_json: bool, strict: bool, stage_opts: tuple[str, ...],
          ceiling_opts: tuple[str, ...], allow_mixed: bool, case_ref: str | None) -> None:
    """Gate CAPTURES (one ladder) on a thresholds file: exit 0 all rules pass, 1 any fails, 2 bad input."""
    from profiler_report import gate
    from profiler_report.analysis.compare import require_comparable, run_identity
    from profiler_report.analysis.run import load_run, refuse_mixed
    from profiler_report.model.registry import get_case

    if thresholds_path is None and case_ref is not None:  # the case's own gate
        thresholds_path = get_case(case_ref).thresholds()
        if thresholds_path is None:
            raise InputError(f"case {case_ref} has no thresholds.toml", "pass --thresholds FILE")
    if thresholds_path is not None:
        thresholds = gate.load_thresholds(thresholds_path)  # a bad file fails before the read
    ladder = _ladder(stage_opts, ceiling_opts, case_ref)
    capture = _one_or_many(captures)
    run = load_run(capture, **ladder)
    refuse_mixed(run, allow_mixed)
    if thresholds_path is None:
        # The case found from the capture gates it with its own file (kernels/<case>/thresholds.toml);
        # the transpose (which has none) or a foreign capture with ./thresholds.toml.
        own = run.case.thresholds() if run.case is not None else None
        _no_other_cases_thresholds(run, own)
        thresholds = gate.load_thresholds(own)
    base = load_run(baseline, **ladder) if baseline is not None else None
    diffs = require_comparable(base, run, strict) if base is not None else []
    if base is not None:
        _warn_not_comparable(baseline, capture, diffs)
    results = gate.check_run(thresholds, run, base)
    code = gate.exit_code(results, missing)
    meta = {"capture": " ".join(str(c) for c in captures), "thresholds": thresholds.path,
            "baseline": str(baseline) if baseline else None}
    if junit is not None:
        gate.write_junit(junit, results, missing, {k: str(v) for k, v in meta.items() if v})
    if fmt == "markdown" and not as_json:
        click.echo(gate.results_markdown(results, missing, str(capture), str(thresholds.path)), nl=False)
    elif as_json or fmt == "json":
        click.echo(json.dumps(gate.results_json(results, **meta, missing=missing, not_comparable=diffs,
                                                run=run_identity(run.capture, run.provenance),
                                                exit_code=code), indent=2))
    else:
        click.echo(gate.results_table(results))
        click.echo("\n".join(gate.results_summary(results, missing)))
    if code:
        sys.exit(code)


@main.command(epilog=SEE_EXIT_CODES, short_help="Compare two captures (or ladders) stage by stage.")
@click.argument("captures", nargs=-1, type=click.Path(path_type=Path))
@click.option("--old", "old_opts", multiple=True, type=click.Path(path_type=Path),
              help="A capture of the old ladder (repeat it for one capture per version), instead of OLD.")
@click.option("--new", "new_opts", multiple=True, type=click.Path(path_type=Path),
              help="A capture of the new ladder (repeatable), instead of NEW.")
@click.option("--tolerance", default=0.05, show_default=True, type=click.FloatRange(min=0, max=1e6),
              help="Relative change beyond which a count or ratio is flagged.")
@click.option("--all", "show_all", is_flag=True, help="List every compared metric, not only flagged ones.")
@click.option("--format", "fmt", default="text", show_default=True, type=click.Choice(["text", "csv", "json"]))
@click.option("--strict", is_flag=True, help="Exit 2 when OLD and NEW are not comparable.")
@_ladder_options
def diff(captures: tuple[Path, ...], old_opts: tuple[Path, ...], new_opts: tuple[Path, ...], tolerance: float,
         show_all: bool, fmt: str, strict: bool, stage_opts: tuple[str, ...], ceiling_opts: tuple[str, ...],
         allow_mixed: bool, case_ref: str | None) -> None:
    """OLD NEW (or --old ... --new ...): per stage, each headline metric of both, the change, and a
    flag beyond --tolerance. Launch grids, blocks and work sizes that differ are a warning."""
    if tolerance != tolerance:  # NaN passes every range check
        raise InputError("--tolerance must be a number, not nan", "e.g. --tolerance 0.05")
    if captures and (old_opts or new_opts) or not captures and not (old_opts and new_opts) \
            or captures and len(captures) != 2:
        raise InputError("diff takes OLD NEW, or --old CAPTURE... --new CAPTURE...",
                         "e.g. profiler-report diff old.ncu-rep new.ncu-rep")
    from profiler_report.analysis.compare import diff_summaries, diff_table, require_comparable
    from profiler_report.analysis.run import load_run, refuse_mixed

    ladder = _ladder(stage_opts, ceiling_opts, case_ref)
    old = _one_or_many(old_opts) if old_opts else captures[0]
    new = _one_or_many(new_opts) if new_opts else captures[1]
    a, b = load_run(old, **ladder), load_run(new, **ladder)
    refuse_mixed(a, allow_mixed)
    refuse_mixed(b, allow_mixed)
    diffs = require_comparable(a, b, strict)
    _warn_not_comparable(old, new, diffs)
    frame = diff_summaries(a.summary, b.summary, tolerance)
    if fmt == "csv":
        click.echo(frame.to_csv(index=False), nl=False)
        return
    if fmt == "json":
        click.echo(json.dumps({"old": _names(old), "new": _names(new), "tolerance": tolerance,
                               "not_comparable": diffs, "rows": json.loads(frame.to_json(orient="records"))},
                              indent=2))
        return
    flagged = frame[frame["flagged"]]
    if show_all or len(flagged):
        click.echo(diff_table(frame, flagged_only=not show_all))
    click.echo(f"diff: {len(flagged)} of {len(frame)} compared values flagged beyond {tolerance:.0%}"
               + ("" if show_all else " (--all lists every one)"))


def _names(path: Path | list[Path]) -> str:
    return " ".join(str(p) for p in path) if isinstance(path, list) else str(path)


@main.command("new-case", epilog=SEE_EXIT_CODES)
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="The case's name (default: the folder's name); NVTX ranges carry it.")
def new_case_cmd(folder: Path, name: str | None) -> None:
    """Write a working case folder: kernels.cu (stages between markers), stages.toml (one expected
    effect per stage), case.py (buffers, reference, comparison, work model). Edit it into your own
    ladder, then `profiler-report run --case FOLDER`."""
    from profiler_report.model.scaffold import new_case

    for f in new_case(folder, name):
        click.echo(f"wrote {f}")
    click.echo(f"next: profiler-report run --case {folder}   (on a GPU machine with Nsight Compute)")


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--probe", is_flag=True, help="Profile a tiny kernel with ncu to test counter permission for sure.")
def doctor(probe: bool) -> None:
    """Check GPU, driver, ncu, counter permission and Python packages; say what to fix.

    Exits 0 when a live run can work, else with the exit code of the first blocking problem.
    """
    from profiler_report.live.doctor import diagnose, exit_code, summary_line

    checks = diagnose(probe=probe)
    for c in checks:
        click.echo(c.line())
    click.echo(summary_line(checks))
    code = exit_code(checks)
    if code:
        sys.exit(code)


def entry() -> None:
    """Console-script entry: run the CLI, turning known errors into one line and an exit code."""
    debug = "--debug" in sys.argv[1:]
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except click.exceptions.Abort:  # click's form of KeyboardInterrupt
        click.echo("interrupted: earlier reports are untouched", err=True)
        sys.exit(130)
    except ProfilerReportError as exc:
        if debug:
            traceback.print_exc()
        click.echo(exc.one_line(), err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # an output path that is a file, a read-only folder, a full disk...
        if debug:
            traceback.print_exc()
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        click.echo(f"error: {exc.strerror or exc}{where} (fix: check the path and its permissions)", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted: earlier reports are untouched", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, and a code of its own (never 1, "findings")
        if debug:
            traceback.print_exc()
        click.echo(f"internal error: {type(exc).__name__}: {str(exc)[:300]} (fix: rerun with --debug and report "
                   "the traceback)", err=True)
        sys.exit(70)
    sys.exit(0)


if __name__ == "__main__":
    entry()
