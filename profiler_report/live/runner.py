"""The ``run`` command's work: its options checked (before any GPU work), the report folder
chosen, the live run (:func:`~profiler_report.live.session.live_run`) and its report rendered.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from profiler_report.model.base import Case
from profiler_report.model.registry import DEFAULT_CASE, get_case
from profiler_report.util.fsio import require_folder_path


@dataclass(frozen=True)
class RunOptions:
    """``run``'s options (see ``profiler-report run --help``): the case, the timing size (``size``:
    ``{dim: n}`` from --rows/--cols/--size) and the profiled one (``profile_size``: overrides of it),
    the dtype (None: the case's default), event-timed launches per stage, the stage ids ("" all),
    ncu's clock control, path and timeout, no counters, the sanitizer (None: where it exists) and
    its timeout, the peers, a bench JSON to include, the result cache (``fresh``: reuse nothing;
    ``no_cache``: neither read nor write it), ``default_configs`` (no configuration chosen for the
    shape) and the report folder (None: the default)."""

    case_name: str = DEFAULT_CASE
    size: dict[str, int] | None = None
    profile_size: dict[str, int] | None = None
    dtype: str | None = None
    repeats: int = 30
    stages: str = ""
    clock_control: str = "none"
    ncu_path: str | None = None
    ncu_timeout: float = 600.0
    no_counters: bool = False
    sanitize: bool | None = None
    sanitize_timeout: float = 600.0
    peers: bool = True
    sweep: Path | None = None
    fresh: bool = False
    no_cache: bool = False
    default_configs: bool = False
    out: Path | None = None


def gpu_slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200'."""
    s = re.sub(r"(?i)^nvidia\s+", "", name).lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-") or "gpu"


def run_live(opts: RunOptions) -> Path:
    """Validate, time and profile every stage of the case on this GPU, then render the report;
    returns the report folder. Bad options fail before the GPU is asked for.

    Raises:
        InputError: a bad size, dtype, stage id, sweep file or report folder (and what
            :func:`~profiler_report.live.session.live_run` raises).
    """
    from profiler_report.live.config import RunConfig
    from profiler_report.live.gpu import device_info
    from profiler_report.live.session import live_run
    from profiler_report.util.timer import StepTimer, log

    case = get_case(opts.case_name)
    if case.user_folder is not None:  # a user's folder: checked offline before any GPU work
        from profiler_report.live.check_case import preflight

        preflight(case)
    dtype = case.check_dtype(opts.dtype or case.default_dtype)
    size = case.size(dict(opts.size or {}))
    if opts.out is not None:
        require_folder_path(opts.out)  # before any GPU work: a file given as --out is never moved aside
    psize = case.size({**size, **(opts.profile_size or {})})
    cfg = RunConfig(case=case.ref, size=size, profile_size=psize, dtype=dtype, repeats=opts.repeats,
                    clock_control=opts.clock_control, ncu=opts.ncu_path, ncu_timeout_s=opts.ncu_timeout,
                    counters=not opts.no_counters, stages=[s for s in opts.stages.split(",") if s],
                    sanitize=opts.sanitize, sanitize_timeout_s=opts.sanitize_timeout, fresh=opts.fresh,
                    cache=not opts.no_cache, choose=not opts.default_configs)
    case.manifest.run_stages(cfg.stages)  # before the GPU is asked for: bad input, not a missing GPU
    if opts.sweep is not None:
        from profiler_report.capture.sidecars import read_sweep

        read_sweep(opts.sweep)
    out = opts.out
    if out is None:
        named = "" if case.name == DEFAULT_CASE else f"{case.name}-"  # another case: its own folder
        out = Path("reports") / f"{gpu_slug(device_info()['gpu'])}-{named}{dt.date.today():%Y%m%d}"
    timer = StepTimer()
    try:
        live_run(cfg, out, render=_renderer(case, out), timer=timer, peers=opts.peers, sweep=opts.sweep,
                 prepare=_prepare_render)
    finally:
        if timer.steps:  # nothing ran when an error came first: keep its one line alone
            log(timer.table())
    return out


def _prepare_render() -> None:
    from profiler_report.report.build import prepare

    prepare()


def _renderer(case: Case, out: Path) -> Callable[[Path], None]:
    """The live run's render step: the capture's report, or the counter-less one without a capture."""
    def render(folder: Path) -> None:
        from profiler_report.capture.parts import read_parts
        from profiler_report.report.build import render_capture, render_timings_only

        parts = read_parts(folder)
        if parts is not None:  # stages reused from earlier captures: one ladder read from every file
            from profiler_report.analysis.run import load_run
            from profiler_report.capture.sidecars import read_sidecars

            files = [p for p, _ in parts]
            run = load_run(files, case=case, sidecars=read_sidecars(folder), keep=[s for _, s in parts])
            render_capture(files, folder, live=True, case=case, run=run,
                           capture_label=", ".join(str(out / p.name) for p in dict.fromkeys(files)))
        elif (folder / "profile.ncu-rep").is_file():
            render_capture(folder / "profile.ncu-rep", folder, live=True, capture_label=str(out / "profile.ncu-rep"),
                           case=case)
        else:
            render_timings_only(folder, case=case)
    return render
