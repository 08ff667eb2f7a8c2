"""The live run, end to end: choose -> sanitize -> validate -> time -> profile -> experiments ->
peers -> (read -> analyze -> render).

Writes one report folder atomically: everything goes to ``<dest>.partial`` first and is renamed
over ``<dest>`` only when complete, so an earlier report survives a failure or Ctrl-C.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from profiler_report.analysis.sanitizer import sanitizer_text
from profiler_report.errors import KernelIncorrectError
from profiler_report.live import gpu, reuse
from profiler_report.live import kernels as kern
from profiler_report.live import ncu as prof
from profiler_report.live import sanitizer as san
from profiler_report.live.cache import RunCache, open_cache
from profiler_report.live.config import RunConfig
from profiler_report.live.doctor import counters_off_reason
from profiler_report.live.ncu_steps import Profiling, profile_good
from profiler_report.live.peers_process import PeersProcess
from profiler_report.live.read_ahead import join
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.model.registry import get_case
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


def provenance(cfg: RunConfig, case: Case, ncu: str | None, stages: list[str]) -> dict[str, Any]:
    """Everything that makes a run comparable and traceable (stored as provenance.json).

    The case's dimensions are stored flat (``rows``, ``cols`` for the transpose), those under ncu
    as ``profile_<dim>``; ``dims`` names them.
    """
    size, psize = case.size(cfg.size), case.size(cfg.profile_size or cfg.size)
    return {
        "mode": "live",
        "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "commit": git_commit(Path(__file__).resolve().parent.parent.parent),
        "host": platform.node(),
        "python": platform.python_version(),
        **gpu.device_info(),
        "driver": nvidia_driver(),
        "ncu": ncu or "not used",
        "ncu_version": prof.ncu_version(ncu, min(60.0, cfg.ncu_timeout_s)) if ncu else "not used",
        "section_set": "full" if cfg.counters else "none (--no-counters)",
        "counters": "collected" if cfg.counters else f"unavailable ({counters_off_reason()})",
        "clock_control": cfg.clock_control if cfg.counters else "n/a (no profiler)",
        "cache_control": "all (ncu default: caches flushed before each replay pass)" if cfg.counters else "n/a",
        "case": case.name,
        **({"case_dir": case_dir_text(case.user_folder)} if case.user_folder else {}),
        "dims": list(case.dims),
        **size,
        **{f"profile_{d}": v for d, v in psize.items()},
        "dtype": cfg.dtype,
        "repeats": cfg.repeats,
        "buffers": cfg.buffers,
        "event_timing": gpu.EVENT_TIMING,
        "stages": stages,
    }


def case_dir_text(folder: Path) -> str:
    """A user's case folder as provenance.json records it: relative to the working directory when
    inside it (a repository's ``examples/histogram``, valid on every clone), else absolute."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(folder.resolve())


def _with_sanitizer(v: kern.Validation, doc: dict[str, Any] | None) -> kern.Validation:
    """``v`` marked wrong when compute-sanitizer found something in its stage (a correct result at
    the timing size does not clear a race or an out-of-bounds access at the small size)."""
    rec = next((r for r in (doc or {}).get("stages", []) if r["stage"] == v.stage), None)
    if rec is None or rec["correct"] or not v.correct:
        return v
    return replace(v, correct=False, message=f"stage {v.stage} fails under compute-sanitizer at "
                                             f"{(doc or {})['size_text']} {(doc or {})['dtype']}: {rec['first']}")


def _measure(cfg: RunConfig, case: Case, stages: list[Stage], timer: StepTimer,
             sanitized: dict[str, Any] | None = None, rc: RunCache | None = None) -> tuple[list, list]:
    """Build, validate every stage and the ceiling (reused from the cache where its key matches;
    a compute-sanitizer finding marks a stage wrong too), event-time the correct ones (always
    now, in this process: timings are never reused)."""
    size = case.size(cfg.size)
    rc = rc or RunCache(None, {}, "")
    everything = [*stages, case.manifest.ceiling]
    with timer.step("build"):
        chosen = tuple(s for s in stages if s != case.manifest.stage(s.id))  # a configuration chosen for the shape
        module, names = kern.compile_module(case, cfg.dtype, extra=chosen)
        kernels = kern.Kernels(module, names, cfg.dtype, case)
    with timer.step("validate"):
        validations = []
        for i, s in enumerate(everything):
            timer.tick(i + 1, len(everything), s.id)
            v = reuse.validate(rc, cfg, case, s, size, partial(kern.validate, kernels, s, size))
            validations.append(_with_sanitizer(v, sanitized))
        for v in validations:
            log(f"  {v.stage:<14} {'correct' if v.correct else 'WRONG: ' + v.message}")
    good = [s for s, v in zip(stages, validations, strict=False) if v.correct]
    with timer.step("time"):
        timings = kern.time_stages(kernels, [*good, case.manifest.ceiling], size, cfg.repeats, cfg.warmup,
                                   cfg.buffers)
        rc.retimed = [t.name for t in timings]
        for t in timings:
            log(f"  {t.name:<14} {t.median_us:9.1f} us  {t.gbps:7.1f} GB/s")
    return validations, timings


def _find_tools(cfg: RunConfig, case: Case) -> tuple[str | None, str | None, str]:
    """(ncu or None without counters, compute-sanitizer or None, why no sanitizer: "" when one runs).

    Raises:
        NoGpuError, NcuNotFoundError, SanitizerNotFoundError.
    """
    # The machine first, whatever the options: no GPU or CuPy is exit 8 with or without counters,
    # then a missing ncu (3) or compute-sanitizer (11) on a machine that has one.
    gpu.import_cupy()
    ncu = prof.find_ncu(cfg.ncu) if cfg.counters else None
    sanitizer, no_sanitizer = san.resolve(cfg.sanitize if case.compiles_cuda else False)
    if not case.compiles_cuda:  # its findings are attributed to the kernel blocks of a CUDA source
        no_sanitizer = "not run: a Python ladder's stages are functions, not kernel blocks of a CUDA source"
    gpu.import_cupy()  # no GPU or CuPy: fail before any output, with one line
    return ncu, sanitizer, no_sanitizer


def _write_measured(out: Path, prov: dict[str, Any], sanitized: dict[str, Any] | None,
                    validations: list[Any], timings: list[Any]) -> None:
    """sanitizer.json (when the tools ran), validation.json, timings.json and provenance.json."""
    if sanitized is not None:
        write_json(out / "sanitizer.json", sanitized)
    write_json(out / "validation.json", gpu.asdicts(validations))
    write_json(out / "timings.json", {"provenance": prov, "timings": gpu.asdicts(timings)})
    write_json(out / "provenance.json", prov)


def live_run(cfg: RunConfig, dest: Path, render: Callable[[Path], Any] | None = None,
             timer: StepTimer | None = None, peers: bool = False, sweep: Path | None = None,
             prepare: Callable[[], Any] | None = None) -> None:
    """Validate, time and profile every stage of ``cfg.case``; write the report folder ``dest``
    atomically.

    First, unless ``cfg.sanitize`` is False, every stage once under compute-sanitizer
    (memcheck, racecheck, synccheck) at the case's small odd size, where it exists: a finding
    marks the stage wrong (never timed nor profiled), like a failed validation.

    Files: sanitizer.json (+ sanitizer-<tool>.log), validation.json, timings.json, provenance.json,
    profile.ncu-rep (+ ncu.log), each experiment's ``<id>.ncu-rep`` and ``<id>.json`` (+ ``<id>.log``;
    only without ``cfg.stages``), bench.json
    (``peers``: stages against the case's peers at the timing size), sweep.json (a copy of
    ``sweep``, an earlier ``profiler-report bench`` result), reuse.json (what came from the
    result cache, what was re-timed, the configuration chosen for the shape), profile-parts.json
    and ``reused-<hash>.ncu-rep`` when the stages' captures come from several files, then whatever
    ``render(folder)`` writes (index.html, summary.csv/json). ``prepare()``, when given, readies
    the render (its imports) in a thread while ncu profiles, when this process only waits.

    The peers are timed in a process of their own (:mod:`~profiler_report.live.peers_process`),
    started first so that it imports the peer libraries while the other phases run, and asked for
    the timings at the peers' step, after ncu's, while this process waits (the GPU is theirs
    alone). If its imports are over when the compute-sanitizer starts, it builds and runs each
    peer once beside it, untimed; nothing is timed until that is done. The experiments' kernels
    are compiled beside the sanitizer too. The
    ladder's captures are read into the result cache while ncu profiles the experiments and the
    peers are timed (a child that uses the CPU only, at a lower priority).

    Results whose key matches are reused from the result cache (:mod:`profiler_report.live.reuse`:
    sanitizer verdicts, validations, captures, peers, experiments, the configuration choice;
    ``cfg.fresh`` reuses nothing, ``cfg.cache`` False neither reads nor writes); event timings
    never are. A stage with candidate configurations runs in the one chosen for the shape
    (``cfg.choose``).

    Raises:
        NoGpuError, NcuNotFoundError, CounterPermissionError, NoKernelProfiledError,
        StageNotProfiledError (a stage missing from ncu's report: the partial folder is kept),
        NcuFailedError, NcuTimeoutError; SanitizerNotFoundError (``cfg.sanitize`` True and no
        compute-sanitizer); InputError for an unknown case or stage;
        KernelIncorrectError after writing the report when a stage was wrong.
    """
    t0 = time.monotonic()
    case = get_case(cfg.case)
    case.check_dtype(cfg.dtype)
    timer = timer or StepTimer()
    stages = case.manifest.run_stages(cfg.stages)
    ncu, sanitizer, no_sanitizer = _find_tools(cfg, case)
    rc = open_cache(cfg.fresh, cfg.cache, gpu.device_info(), nvidia_driver(),
                    git_commit(Path(__file__).resolve().parent.parent.parent), case)
    timer.estimates = reuse.last_steps(rc, cfg, case)
    worker = start_peers(rc, cfg, case) if peers and case.has_peers else None
    timer.add("setup", time.monotonic() - t0)  # the GPU's context, the tools found, the cache opened
    try:
        _run_phases(cfg, case, stages, dest, rc, timer, (ncu, sanitizer, no_sanitizer),
                    _Asked(render, peers, worker, sweep, prepare))
    finally:
        if worker is not None:
            worker.close()


def start_peers(rc: RunCache, cfg: RunConfig, case: Case) -> PeersProcess | None:
    """The peers' process (:mod:`~profiler_report.live.peers_process`), started now so that its
    imports overlap the run's first phases; None when the peers' timings will be reused."""
    if reuse.peers_cached(rc, cfg, case):
        return None
    return PeersProcess.start(case, case.size(cfg.size), cfg.dtype)


def _peers_doc(worker: PeersProcess | None, cfg: RunConfig, case: Case, good: list[Stage],
               prov: dict[str, Any]) -> dict[str, Any]:
    """bench.json's content from the peers' process, or from this process when there is none or it
    gave no answer (said on one line)."""
    if worker is not None:
        gpu.free_cached_memory()  # its buffers and ours would otherwise both be held
        doc, why = worker.bench(good, cfg.repeats, prov, cfg.ncu_timeout_s)
        if worker.seconds:  # where the step's time went: in the process's imports, if they were not over
            log("  the peers' process: " + ", ".join(f"{k} {v:.1f} s" for k, v in worker.seconds.items()))
        if doc is not None:
            return doc
        log(f"  the peers' process gave no result ({why}); timing the peers in this process")
    return case.bench_at(case.size(cfg.size), cfg.dtype, cfg.repeats, good, prov)


@dataclass(frozen=True)
class _Asked:
    """What :func:`live_run`'s caller asked for beyond the config: the render step, the peers
    (and their process, None when there is none), an earlier sweep to include, the render's
    preparation."""

    render: Callable[[Path], Any] | None
    peers: bool
    worker: PeersProcess | None
    sweep: Path | None
    prepare: Callable[[], Any] | None = None


def _beside(fn: Callable[[], Any] | None, name: str) -> threading.Thread | None:
    """``fn()`` in a daemon thread named ``name``, started now; a failure there is left to the
    step it readies, which does the same work again and says why."""
    if fn is None:
        return None

    def quietly() -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001,S110 (the render repeats it and reports the error itself)
            pass
    thread = threading.Thread(target=quietly, name=name, daemon=True)
    thread.start()
    return thread


def _run_phases(cfg: RunConfig, case: Case, stages: list[Stage], dest: Path, rc: RunCache, timer: StepTimer,
                tools: tuple[str | None, str | None, str], asked: _Asked) -> None:
    """:func:`live_run`'s phases into ``dest`` (atomically): ``tools`` (ncu, compute-sanitizer, why
    no sanitizer)."""
    ncu, sanitizer, no_sanitizer = tools
    with_peers, worker, render, sweep = asked.peers, asked.worker, asked.render, asked.sweep
    with atomic_dir(dest) as out:
        configs, choices = reuse.choose(rc, cfg, case, stages, timer)
        stages = [replace(s, targs=configs[s.id]) if s.id in configs else s for s in stages]
        # Beside the sanitizer, which checks correctness, not speed: the peers' warm-up when their
        # imports are over, and the experiments' compiles (CPU; waited for before anything is timed)
        warming = worker is not None and sanitizer is not None and worker.ready()
        if warming and worker is not None:
            worker.warm()
        compiling = _beside(partial(_precompile, case), "precompile") \
            if sanitizer and ncu and not cfg.stages else None
        sanitized = reuse.sanitize(rc, cfg, case, stages, sanitizer, out, timer, configs) if sanitizer else None
        if compiling is not None and compiling.is_alive():
            with timer.step("precompile"):  # what of it outlasted the sanitizer
                compiling.join()
        if warming and worker is not None:
            with timer.step("peers_warmup"):  # what of it outlasted the sanitizer: waited for here
                why = worker.warmed(cfg.ncu_timeout_s)
            if why:
                log(f"  the peers' process stopped ({why}); the peers will be timed in this process")
                worker = None
        validations, timings = _measure(cfg, case, stages, timer, sanitized, rc)
        good = [s for s, v in zip(stages, validations, strict=False) if v.correct]
        prov = provenance(cfg, case, ncu, [s.id for s in stages])
        prov["sanitizer"] = sanitizer_text(sanitized, no_sanitizer)
        _write_measured(out, prov, sanitized, validations, timings)
        if sweep is not None:
            shutil.copyfile(sweep, out / "sweep.json")
        # ncu's steps leave this process waiting: the render's imports are made meanwhile (not
        # sooner: a busy CPU would delay the timed launches)
        readying = _beside(asked.prepare, "prepare-render") if render is not None and ncu and good else None
        timing_peers = with_peers and case.has_peers and not reuse.peers_cached(rc, cfg, case)
        job = Profiling(ncu, out, timer, configs, validations[-1].correct, str(prov["commit"])) if ncu else None
        reader = profile_good(rc, cfg, case, good, job, timing_peers)
        try:
            # The peers last: by now their process has long finished its imports. The captures'
            # read goes on beside them (a child on the CPU alone, below their priority).
            if with_peers and case.has_peers:  # a case without peers (a user's) is not asked for them
                with timer.step("peers"):
                    write_json(out / "bench.json", reuse.peers(rc, cfg, case, good,
                                                               partial(_peers_doc, worker, cfg, case, good, prov)))
        except BaseException:
            join(reader, timeout_s=0.0)
            raise
        if reader is not None:
            with timer.step("read_ahead_wait"):  # what of the captures' read outlasted the steps since
                join(reader, timeout_s=120.0)
        write_json(out / reuse.REUSE, reuse.document(rc, choices))
        if render is not None:
            with timer.step("render"):
                if readying is not None:
                    readying.join()
                render(out)
        reuse.save_steps(rc, cfg, case, timer)
    _refuse_wrong(validations, dest)


def _precompile(case: Case) -> None:
    """Each experiment's kernels compiled into the compiler's disk cache (its ncu target then
    loads them)."""
    for exp in case.experiments():
        exp.precompile()


def _refuse_wrong(validations: list[Any], dest: Path) -> None:
    """Raises:
        KernelIncorrectError: a stage was wrong (the report in ``dest`` is written first)."""
    wrong = [v for v in validations if not v.correct]
    if wrong:
        raise KernelIncorrectError(wrong[0].message + f" ({len(wrong)} stage(s) wrong; report written to {dest})",
                                   "fix the kernel; no speed is reported for a wrong stage")
