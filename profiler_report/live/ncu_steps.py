"""The live run's ncu steps: the ladder's stages and ceiling under ``--set full`` in one ncu
process (:func:`profile_ladder`), each experiment in one of its own (:func:`profile_experiments`),
both reused from the result cache where their keys match (:func:`profile_good`)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from profiler_report.errors import ProfilerReportError
from profiler_report.live import gpu, reuse
from profiler_report.live import ncu as prof
from profiler_report.live.cache import RunCache
from profiler_report.live.config import RunConfig
from profiler_report.live.read_ahead import join, read_ahead
from profiler_report.model.base import Case
from profiler_report.model.experiment import RESULT_PREFIX
from profiler_report.model.manifest import Stage
from profiler_report.model.ranges import nvtx_range_name
from profiler_report.util.fsio import write_json
from profiler_report.util.timer import StepTimer, log


@dataclass(frozen=True)
class Profiling:
    """What the run's ncu steps share: ncu's path, the report folder (``out``), the step timer,
    the configuration chosen for the shape (stage id -> template arguments), whether the run found
    every profiled stage and the ceiling correct at its size (``validated``), and the run's commit
    (the experiments' files name it)."""

    ncu: str
    out: Path
    timer: StepTimer
    configs: dict[str, tuple[str, ...]]
    validated: bool = False
    commit: str = ""


def profile_ladder(cfg: RunConfig, case: Case, profiled: list[Stage], job: Profiling) -> None:
    """One ncu process: ``--set full`` on one launch per stage, exported to ``profile.ncu-rep`` in
    ``job.out`` (inside the caller's "profile" step: its progress line counts the kernels ncu
    finished). Where ``job.validated`` and the profile's size is the run's, the target does not
    validate the stages again."""
    psize = case.size(cfg.profile_size or cfg.size)
    ncu, out, timer = job.ncu, job.out, job.timer
    cmd = prof.NcuCommand(
        ncu=ncu, export=out / "profile",
        target=prof.target_command(case.ref, psize, cfg.dtype, [s.id for s in profiled],
                                   {k: v for k, v in job.configs.items() if k in {s.id for s in profiled}},
                                   validated=job.validated and psize == case.size(cfg.size)),
        ranges=[nvtx_range_name(case.name, s.id) for s in profiled],
        clock_control=cfg.clock_control,
    )
    done: list[str] = []

    def progress(line: str) -> None:
        if line.startswith("  profiled "):  # run_ncu's line per kernel ncu finished
            done.append(line)
            timer.tick(len(done), max(len(done), len(profiled)), line.strip())  # a stage may launch several
        else:
            log(line)

    output = prof.run_ncu(cmd, cfg.ncu_timeout_s, log=progress, log_path=out / "ncu.log")
    prof.check_profiled(cmd, [s.id for s in profiled], output)  # exit 0 is not proof of every stage


def profile_experiments(case: Case, cfg: RunConfig, job: Profiling, rc: RunCache | None = None) -> bool:
    """One ncu process per experiment of the case (:meth:`Case.experiments`), collecting only its
    :attr:`~profiler_report.model.experiment.Experiment.ncu_options`, into ``<id>.ncu-rep`` in
    ``job.out``; the target's per-point validation into ``<id>.json``. An experiment whose ncu run fails is
    recorded there as ``{"error": ...}`` (the report says so) and the run goes on: the ladder's
    report does not rest on it. With ``rc``, an experiment whose key matches is reused. Returns
    whether ncu ran for any."""
    ran = False
    for exp in case.experiments():
        with job.timer.step(exp.id):
            ran |= reuse.experiment(rc or RunCache(None, {}, ""), cfg, case, exp, job.ncu, job.out,
                                    partial(_experiment, case, exp, cfg, job))
    return ran


def _experiment(case: Case, exp: Any, cfg: RunConfig, job: Profiling) -> None:
    """One experiment's ncu run (see :func:`profile_experiments`)."""
    ncu, out = job.ncu, job.out
    cmd = prof.NcuCommand(
        ncu=ncu, export=out / exp.id, section_set="", extra=list(exp.ncu_options),
        target=[sys.executable, "-m", "profiler_report.live.target", "experiment", "--case", case.ref,
                "--experiment", exp.id],
        ranges=[exp.range_name(case.name, p) for p in exp.point_ids()], clock_control=cfg.clock_control)
    try:
        output = prof.run_ncu(cmd, cfg.ncu_timeout_s, log_path=out / f"{exp.id}.log")
    except ProfilerReportError as exc:
        log(f"  {exp.id}: not recorded ({exc.message})")
        write_json(out / f"{exp.id}.json", {"error": exc.message, "points": []})
        return
    lines = [ln for ln in output.splitlines() if ln.startswith(RESULT_PREFIX)]
    points = json.loads(lines[-1][len(RESULT_PREFIX):]) if lines else []
    write_json(out / f"{exp.id}.json", {
        "experiment": exp.id, "points": points, "error": "" if lines else "the target printed no results",
        "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "commit": job.commit,
        "gpu": gpu.device_info().get("gpu", ""),
        "ncu_version": prof.ncu_version(ncu, 60.0), "clock_control": cfg.clock_control,
        "ncu_options": " ".join(exp.ncu_options)})


def profile_good(rc: RunCache, cfg: RunConfig, case: Case, good: list[Stage], job: Profiling | None,
                 peers_next: bool = False) -> subprocess.Popen[bytes] | None:
    """The correct stages and the ceiling under ncu (reused where cached), then the experiments;
    nothing without ncu (``job`` None: no counters) or without a correct stage. Returns the child that
    reads the ladder's captures ahead (:func:`~profiler_report.live.read_ahead.read_ahead`,
    started with the experiments), still running: the caller joins it before the render; None
    when no experiment was profiled and no peers are timed next (``peers_next``), as after an
    edit, where it would only be waited for."""
    if job is None or not good:
        return None
    profiled = [*good, case.manifest.ceiling]
    with job.timer.step("profile"):
        reuse.profile(rc, cfg, case, profiled, job.ncu, job.out, lambda todo: profile_ladder(cfg, case, todo, job))
    if cfg.stages or not case.experiments():  # only the whole ladder (make report) has its experiments
        return None
    reader = read_ahead(sorted(job.out.glob("*.ncu-rep")))
    try:
        ran = profile_experiments(case, cfg, job, rc)
    except BaseException:
        join(reader, timeout_s=0.0)  # stopped at once: the run ends here
        raise
    if not ran and not peers_next:  # nothing for it to run beside: the render reads (beside its
        join(reader, timeout_s=0.0)  # own imports) what it has not
        return None
    return reader
