"""Command line: ``profiler-report run | render | summary`` (and the checks).

Every error the tool knows about is printed as one line with its fix, and exits with the code
listed in ``profiler-report --help``; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .errors import exit_codes_help
from .model.registry import DEFAULT_CASE
from .util.dtypes import ALL_DTYPES
from .util.exits import run_main
from .util.options import format_option, ladder_options, old_and_new, parse_dims, sized

if TYPE_CHECKING:
    from profiler_report.util.writers import Writers

#: The ``Exit codes:`` epilog of the top-level ``--help``, from :data:`errors.EXIT_CODE_TABLE`.
EXIT_CODES = exit_codes_help()
#: Each subcommand's epilog: the table once, in the top-level help, is enough.
SEE_EXIT_CODES = "Exit codes: see `profiler-report --help`."

def _summary_writers() -> Writers[Any]:
    from profiler_report.report.outputs import SUMMARY
    return SUMMARY


def _check_writers() -> Writers[Any]:
    from profiler_report.gate.writers import CHECK
    return CHECK


def _diff_writers() -> Writers[Any]:
    from profiler_report.analysis.diff_output import DIFF
    return DIFF


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
@click.option("--case", "case_name", default=DEFAULT_CASE, show_default=True,
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
@click.option("--fresh", is_flag=True,
              help="Redo everything: reuse nothing from the result cache (`profiler-report cache` lists it); "
                   "the new results are still stored. By default a stage's capture, validation and sanitizer "
                   "verdict, the peers' timings, the experiments and the configuration choice are reused when "
                   "everything they depend on is unchanged; event timings are always taken again.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--default-configs", is_flag=True,
              help="Run every stage in its stages.toml configuration, without choosing one for the shape.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Report folder (default: reports/<gpu>-<yyyymmdd>; other cases reports/<gpu>-<case>-<yyyymmdd>).")
def run(**opts: Any) -> None:
    """Validate, time and profile every stage of a case on this GPU, then render the report."""
    from profiler_report.live.runner import RunOptions, run_live

    size = sized(opts.pop("size_opts"), "--size", rows=opts.pop("rows"), cols=opts.pop("cols"))
    profile = sized(opts.pop("profile_opts"), "--profile-size", rows=opts.pop("profile_rows"),
                    cols=opts.pop("profile_cols"))
    out = run_live(RunOptions(size=size, profile_size=profile, **opts))
    click.echo(f"report: {out / 'index.html'}")


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--from", "captures", required=True, multiple=True, type=click.Path(path_type=Path),
              help="A .ncu-rep (any capture, not only ours) or a raw-page CSV export. Repeat it for a ladder "
                   "kept as one capture per version: stages in the order given.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: <first capture's folder>/rendered).")
@ladder_options
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
def render(captures: tuple[Path, ...], out: Path | None, expect: Path | None, baseline: Path | None, strict: bool,
           force: bool, want: str, **ladder_opts: Any) -> None:
    """Render the staged HTML report from existing captures (no GPU needed)."""
    from profiler_report.capture.readahead import start_read
    from profiler_report.report.render_cmd import render_captures, render_target

    target = render_target(captures, out, force, ladder_opts)
    # ncu_report reads in child processes while this one imports pandas, matplotlib and jinja2.
    render_captures(captures, target, expect, baseline, strict, want, [start_read(c) for c in captures])


@main.command(epilog=SEE_EXIT_CODES)
@click.argument("captures", nargs=-1, required=True, type=click.Path(path_type=Path))
@format_option(_summary_writers)
@ladder_options
@click.pass_context
def summary(ctx: click.Context, captures: tuple[Path, ...], fmt: str, stage_opts: tuple[str, ...],
            ceiling_opts: tuple[str, ...], allow_mixed: bool, case_ref: str | None) -> None:
    """Print the per-stage headline table of CAPTURES (.ncu-rep or raw-page .csv), one row per stage;
    several captures are one ladder, in the order given.

    Event-timing columns (event_median_us, event_gbps, pct_of_memcpy, ...) are added when a
    timings.json from a live run sits beside the capture.
    """
    from profiler_report.analysis.cli_args import ladder as ladder_kw
    from profiler_report.analysis.cli_args import names, one_or_many
    from profiler_report.analysis.compare import run_identity
    from profiler_report.analysis.run import load_run, refuse_mixed, reused_run
    from profiler_report.report.outputs import SUMMARY, SummaryInput

    ladder = ladder_kw(stage_opts, ceiling_opts, case_ref)
    run = reused_run(one_or_many(captures), ladder)[0] or load_run(one_or_many(captures), **ladder)
    refuse_mixed(run, allow_mixed)
    if ctx.get_parameter_source("fmt") is click.core.ParameterSource.DEFAULT and not sys.stdout.isatty():
        fmt = "csv"  # a table for people, every column for scripts
    gpu = run_identity(run.capture, run.provenance).get("gpu", "unknown GPU")
    result = SummaryInput(run.analysis, run.sidecars.sanitizer, names(one_or_many(captures)),
                          run.sidecars.validation, run.case, f"{gpu}, {run.provenance.get('mode', 'recorded capture')}")
    click.echo(SUMMARY[fmt].write(result), nl=False)


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--out", type=click.Path(path_type=Path), default=Path("bench.json"), show_default=True,
              help="JSON file for the results (render picks up bench.json beside a capture).")
@click.option("--quick", is_flag=True, help="Only 8192x8192 float32 with peers; no sweep.")
@click.option("--repeats", default=30, show_default=True, help="Event-timed launches per entry (>= 20).")
@click.option("--case", "case_name", default=DEFAULT_CASE, show_default=True, help="The case study (kernel ladder).")
@click.option("--cluster", type=click.Choice(["local"]), default=None,
              help="Fan the sweep's points out over a dask-cuda LocalCUDACluster: one worker per visible GPU "
                   "(needs the cluster extra).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Fan the sweep's points out over a running Dask cluster, e.g. tcp://host:8786 (one GPU per worker).")
@click.option("--fresh", is_flag=True,
              help="Run every point again; by default points finished by this commit (kept in OUT.points/) are reused.")
def bench(**opts: Any) -> None:
    """Time every stage against memcpy, copy kernels and peer libraries; sweep sizes and dtypes (GPU).

    One task per sweep point (case, size, dtype, configuration): in-process by default, or on the GPUs
    of a Dask cluster (--cluster local, --scheduler ADDRESS). A failed point is retried once, then
    listed with its reason under the JSON's sweep.points; running the command again resumes."""
    from profiler_report.live.commands import point_progress, print_outcome
    from profiler_report.live.sweeps import BenchOptions, run_bench

    print_outcome(run_bench(BenchOptions(**opts), progress=point_progress))


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--case", "case_name", default=DEFAULT_CASE, show_default=True, help="The case study (kernel ladder).")
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
def sweep(**opts: Any) -> None:
    """Profile a sweep: one ncu process (--set full) per point (stages x size x dtype), each
    exporting its own capture; in-process by default, or one task per point on the GPUs of a Dask
    cluster. Writes one sweep.json (each point's headline metrics and where it ran) and one report.
    A failed point is retried once, then listed with its reason; running the command again resumes."""
    from profiler_report.live.commands import point_progress, print_outcome
    from profiler_report.live.sweeps import SweepOptions, run_profiled

    sizes = tuple(parse_dims(tuple(s.split(","))) for s in opts.pop("sizes")) or ({},)
    print_outcome(run_profiled(SweepOptions(sizes=sizes, **opts), progress=point_progress))


@main.command(epilog=SEE_EXIT_CODES)
@click.argument("captures", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--thresholds", "thresholds_path", type=click.Path(path_type=Path), default=None,
              help="Thresholds file (default: the capture's case's kernels/<case>/thresholds.toml; a capture "
                   f"made elsewhere: the {DEFAULT_CASE}'s).")
@click.option("--baseline", type=click.Path(path_type=Path), default=None,
              help="An earlier capture, for rules relative to 'baseline'.")
@click.option("--missing", type=click.Choice(["fail", "warn"]), default="fail", show_default=True,
              help="Whether a rule whose metric is not measured fails the check or only warns.")
@click.option("--junit", type=click.Path(path_type=Path), default=None,
              help="Also write JUnit XML here (one test case per rule and stage).")
@format_option(_check_writers)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--strict", is_flag=True, help="Exit 2 when CAPTURES and --baseline are not comparable.")
@ladder_options(gate=True)
def check(captures: tuple[Path, ...], thresholds_path: Path | None, baseline: Path | None, missing: str,
          junit: Path | None, fmt: str, as_json: bool, strict: bool, **ladder_opts: Any) -> None:
    """Gate CAPTURES (one ladder) on a thresholds file: exit 0 all rules pass, 1 any fails, 2 bad input."""
    from profiler_report.gate.check_cmd import run_check

    code = run_check(captures, thresholds_path, baseline, missing, junit, "json" if as_json else fmt, strict,
                     ladder_opts)
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
@format_option(_diff_writers)
@click.option("--fail-on", "fail_on", default="never", show_default=True, type=click.Choice(["never", "regression"]),
              help="regression: exit 1 when a gated metric got worse beyond --tolerance (event timings: beyond "
                   "their p10..p90 spread too); raw counters and single-launch times never fail it.")
@click.option("--strict", is_flag=True, help="Exit 2 when OLD and NEW are not comparable.")
@ladder_options
def diff(captures: tuple[Path, ...], old_opts: tuple[Path, ...], new_opts: tuple[Path, ...], tolerance: float,
         fmt: str, fail_on: str, strict: bool, **opts: Any) -> None:
    """OLD NEW (or --old ... --new ...): per stage, each headline metric of both, the change, and
    each change beyond --tolerance marked better or worse by the metric's direction. Launch grids,
    blocks and work sizes that differ are a warning."""
    old, new = old_and_new(captures, old_opts, new_opts, tolerance)
    from profiler_report.analysis.diff_cmd import run_diff

    if run_diff(old, new, tolerance, fmt, fail_on, strict, opts):
        sys.exit(1)


@main.command("new-case", epilog=SEE_EXIT_CODES)
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="The case's name (default: the folder's name); NVTX ranges carry it.")
@click.option("--python", "python", is_flag=True,
              help="A Python ladder: stages.py (each stage a function of torch tensors: PyTorch, torch.compile, "
                   "Triton) instead of kernels.cu.")
def new_case_cmd(folder: Path, name: str | None, python: bool) -> None:
    """Write a working case folder: kernels.cu (stages between markers), stages.toml (one expected
    effect per stage), case.py (buffers, reference, comparison, work model). With --python,
    stages.py instead of kernels.cu: each stage a Python function. Edit it into your own ladder,
    then `profiler-report run --case FOLDER`."""
    from profiler_report.live.commands import new_case

    new_case(folder, name, python)


@main.command("check-case", epilog=SEE_EXIT_CODES)
@click.argument("folder")
@click.option("--arch", default="sm_90", show_default=True, help="The GPU architecture NVRTC compiles for.")
@click.option("--no-compile", is_flag=True, help="Skip the NVRTC compile (no registers, spills or compile errors).")
def check_case_cmd(folder: str, arch: str, no_compile: bool) -> None:
    """Check a case folder (or a built-in case by name) without a GPU: stages.toml parses, case.py
    imports, every stage compiles with NVRTC for --arch (registers and spills per stage, as ptxas -v
    reports them) and each launch shape fits the kernel's limits. Exit 0 with a table, or 10 with
    one line per problem."""
    from profiler_report.live.commands import check_case

    code = check_case(folder, arch, not no_compile)
    if code:
        sys.exit(code)


@main.command("cache", epilog=SEE_EXIT_CODES)
@click.option("--clear", is_flag=True, help="Remove every entry (or, with --kind, every entry of that kind).")
@click.option("--kind", default=None, help="Only entries of this kind: profile, capture, validation, sanitizer, "
              "peers, experiment, choice, steps.")
def cache_cmd(clear: bool, kind: str | None) -> None:
    """List the result cache that `run` reuses results from (where it is, each entry's kind, size,
    date and commit), or clear it. Folder: $PROFILER_REPORT_CACHE, else $XDG_CACHE_HOME/profiler-report,
    else ~/.cache/profiler-report; bounded by $PROFILER_REPORT_CACHE_MB (default 4096), least recently
    used entries removed first."""
    from profiler_report.live.commands import cache

    cache(clear, kind)


@main.command(epilog=SEE_EXIT_CODES)
@click.option("--probe", is_flag=True, help="Profile a tiny kernel with ncu to test counter permission for sure.")
def doctor(probe: bool) -> None:
    """Check GPU, driver, ncu, counter permission and Python packages; say what to fix.

    Exits 0 when a live run can work, else with the exit code of the first blocking problem.
    """
    from profiler_report.live.commands import doctor

    code = doctor(probe)
    if code:
        sys.exit(code)


def entry() -> None:
    """Console-script entry: run the CLI, turning known errors into one line and an exit code."""
    run_main(main)


if __name__ == "__main__":
    entry()
