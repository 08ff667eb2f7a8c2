"""What the GPU-side and case commands print (``bench``, ``sweep``, ``new-case``, ``check-case``,
``cache``, ``doctor``): each returns the command's exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


def print_outcome(outcome: Any) -> None:
    """A sweep command's :class:`~profiler_report.live.sweeps.Outcome`: its notes and warnings, then its lines."""
    for note in outcome.notes:
        click.echo(f"note: {note}", err=True)
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    for line in outcome.lines:
        if line:
            click.echo(line)


def point_progress(res: Any) -> None:
    """One sweep point's line as it finishes: on stderr when it did not succeed."""
    from profiler_report.live.sweeps import progress_line
    click.echo(progress_line(res), err=res.status != "ok")


def new_case(folder: Path, name: str | None, python: bool) -> None:
    """Write a case folder (:func:`profiler_report.model.scaffold.new_case`) and say what comes next."""
    from profiler_report.model.scaffold import new_case

    for f in new_case(folder, name, python=python):
        click.echo(f"wrote {f}")
    click.echo(f"next: profiler-report check-case {folder}   (offline), then profiler-report run --case {folder}  "
               "(on a GPU machine with Nsight Compute)")


def check_case(folder: str, arch: str, compile_kernels: bool) -> int:
    """Print the check of a case folder (or built-in name): 0 with its table, 10 with one line per problem."""
    from profiler_report.live.check_case import check_case
    from profiler_report.model.registry import get_case

    res = check_case(get_case(folder), arch, compile_kernels=compile_kernels)
    if res.problems:
        for p in res.problems:
            click.echo(f"error: {p}", err=True)
        return 10
    click.echo(res.table())
    for w in res.spills():
        click.echo(w, err=True)
    if not res.case.compiles_cuda:
        click.echo(f"check-case: {len(res.stages)} Python stages ({', '.join(res.case.dtypes)}) found in "
                   f"{res.case.manifest.source.name}; next: profiler-report run --case {folder}")
        return 0
    what = f"compiled with NVRTC for {arch}" if res.compiled else "not compiled (--no-compile)"
    click.echo(f"check-case: {len(res.stages)} kernels ({', '.join(res.case.dtypes)}) {what}; launch shapes "
               f"within the limits; next: profiler-report run --case {folder}")
    return 0


def cache(clear: bool, kind: str | None) -> None:
    """List the result cache's entries (sizes in MiB), or remove them (``kind``: only that kind's)."""
    from profiler_report.util.result_cache import ResultCache

    store = ResultCache()
    if clear:
        click.echo(f"removed {store.clear(kind)} entries from {store.root}")
        return
    entries = store.entries(kind)
    click.echo(f"result cache {store.root}: {len(entries)} entries, {store.size() / 2**20:.1f} MiB of "
               f"{store.limit / 2**20:.0f} MiB")
    for e in entries:
        what = " ".join(str(e.key.get(k)) for k in ("case", "stage", "experiment") if e.key.get(k))
        click.echo(f"  {e.kind:<11} {e.digest[:12]}  {e.nbytes / 2**20:8.2f} MiB  {e.date_utc}  {e.commit:<14} {what}")


def doctor(probe: bool) -> int:
    """Print each check and the summary; the exit code of the first blocking problem, else 0."""
    from profiler_report.live.doctor import diagnose, exit_code, summary_line

    checks = diagnose(probe=probe)
    for c in checks:
        click.echo(c.line())
    click.echo(summary_line(checks))
    return exit_code(checks)
