"""The live run."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profiler_report.cases.manifest import Manifest, load_manifest
from profiler_report.errors import KernelIncorrectError
from profiler_report.live import gpu
from profiler_report.live import kernels as kern
from profiler_report.live import ncu as prof
from profiler_report.live.config import RunConfig
from profiler_report.live.doctor import counters_off_reason
from profiler_report.live.target import nvtx_range_name
from profiler_report.util.fsio import atomic_dir, write_json
from profiler_report.util.timer import StepTimer, log


def git_commit(cwd: Path | None = None) -> str:
    """The commit the run's code comes from: $PROFILER_REPORT_COMMIT when set (a copy of the tree
    sent to a GPU machine, where a stale ``.git`` may sit), else HEAD's short hash with ``-dirty``
    when the tree has changes, else ``unknown``.
    """
    given = os.environ.get("PROFILER_REPORT_COMMIT", "").strip()
    if given:
        return given
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=cwd, capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def nvidia_driver() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        return out.splitlines()[0] if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def provenance(cfg: RunConfig, ncu: str | None, stages: list[str]) -> dict[str, Any]:
    """Everything that makes a run comparable and traceable (stored as provenance.json)."""
    info = gpu.device_info()
    return {
        "mode": "live",
        "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "commit": git_commit(Path(__file__).resolve().parent.parent),
        "host": platform.node(),
        "python": platform.python_version(),
        **info,
        "driver": nvidia_driver(),
        "ncu": ncu or "not used",
        "ncu_version": prof.ncu_version(ncu) if ncu else "not used",
        "section_set": "full" if cfg.counters else "none (--no-counters)",
        "counters": "collected" if cfg.counters else f"unavailable ({counters_off_reason()})",
        "clock_control": cfg.clock_control if cfg.counters else "n/a (no profiler)",
        "cache_control": "all (ncu default: caches flushed before each replay pass)" if cfg.counters else "n/a",
        "rows": cfg.rows,
        "cols": cfg.cols,
        "profile_rows": cfg.profile_rows or cfg.rows,
        "profile_cols": cfg.profile_cols or cfg.cols,
        "dtype": cfg.dtype,
        "repeats": cfg.repeats,
        "buffers": cfg.buffers,
        "stages": stages,
    }


def live_run(cfg: RunConfig, dest: Path, manifest: Manifest | None = None,
             render: Callable[[Path], Any] | None = None, timer: StepTimer | None = None,
             peers: bool = False, sweep: Path | None = None) -> None:
    """Validate, time and profile every stage; write the report folder ``dest`` atomically.

    Files: validation.json, timings.json, provenance.json, profile.ncu-rep (+ ncu.log), bench.json
    (``peers``: stages against peer libraries at the timing size), sweep.json (a copy of ``sweep``,
    an earlier ``profiler-report bench`` result), then whatever ``render(folder)`` writes
    (index.html, summary.csv/json).

    Raises:
        NoGpuError, NcuNotFoundError, CounterPermissionError, NoKernelProfiledError,
        NcuFailedError, NcuTimeoutError; KernelIncorrectError after writing the report when a
        stage was wrong.
    """
    manifest = manifest or load_manifest()
    timer = timer or StepTimer()
    stages = [manifest.stage(s) for s in cfg.stages] if cfg.stages else list(manifest.stages)
    ncu = prof.find_ncu(cfg.ncu) if cfg.counters else None
    gpu.import_cupy()  # no GPU or CuPy: fail before any output, with one line
    prow, pcol = cfg.profile_rows or cfg.rows, cfg.profile_cols or cfg.cols
    with atomic_dir(dest) as out:
        with timer.step("build"):
            module, names = kern.compile_module(manifest, cfg.dtype)
            kernels = kern.Kernels(module, names, cfg.dtype, manifest.tile)
        with timer.step("validate"):
            validations = [kern.validate(kernels, s, cfg.rows, cfg.cols) for s in (*stages, manifest.ceiling)]
            for v in validations:
                log(f"  {v.stage:<14} {'correct' if v.correct else 'WRONG: ' + v.message}")
        good = [s for s, v in zip(stages, validations, strict=False) if v.correct]
        with timer.step("time"):
            timings = kern.time_stages(kernels, [*good, manifest.ceiling], cfg.rows, cfg.cols,
                                      cfg.repeats, cfg.warmup, cfg.buffers)
            for t in timings:
                log(f"  {t.name:<14} {t.median_us:9.1f} us  {t.gbps:7.1f} GB/s")
        prov = provenance(cfg, ncu, [s.id for s in stages])
        write_json(out / "validation.json", gpu.asdicts(validations))
        write_json(out / "timings.json", {"provenance": prov, "timings": gpu.asdicts(timings)})
        write_json(out / "provenance.json", prov)
        del kernels, module
        if peers:
            with timer.step("peers"):
                from profiler_report.live.bench import as_json, bench_size

                rows = bench_size(manifest, cfg.rows, cfg.cols, cfg.dtype, repeats=cfg.repeats, stages=good)
                write_json(out / "bench.json", as_json(rows, prov))
        if sweep is not None:
            shutil.copyfile(sweep, out / "sweep.json")
        if ncu and good:
            with timer.step("profile"):
                profiled = [*good, manifest.ceiling]
                cmd = prof.NcuCommand(
                    ncu=ncu, export=out / "profile",
                    target=prof.target_command(prow, pcol, cfg.dtype, [s.id for s in profiled]),
                    ranges=[nvtx_range_name(s.id) for s in profiled],
                    clock_control=cfg.clock_control,
                )
                prof.run_ncu(cmd, cfg.ncu_timeout_s, log_path=out / "ncu.log")
        if render is not None:
            with timer.step("render"):
                render(out)
    wrong = [v for v in validations if not v.correct]
    if wrong:
        raise KernelIncorrectError(wrong[0].message + f" ({len(wrong)} stage(s) wrong; report written to {dest})",
                                   "fix the kernel; no speed is reported for a wrong stage")
