"""Settings of a live run (``profiler-report run``), checked on creation."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from profiler_report.errors import InputError
from profiler_report.model.registry import DEFAULT_CASE
from profiler_report.util.dtypes import ALL_DTYPES


@dataclass
class RunConfig:
    """Settings of a live run (``profiler-report run``)."""

    case: str = DEFAULT_CASE
    #: The case's dimensions for timing (``{"rows": 8192, "cols": 8192}``); empty: its default.
    size: dict[str, int] = field(default_factory=dict)
    #: The dimensions under ncu; empty: the same as ``size``.
    profile_size: dict[str, int] = field(default_factory=dict)
    dtype: str = "float32"
    repeats: int = 30
    warmup: int = 5
    buffers: int = 3
    clock_control: str = "none"
    ncu: str | None = None
    ncu_timeout_s: float = 600.0
    counters: bool = True
    stages: list[str] = field(default_factory=list)  # empty: all manifest stages
    #: ``--sanitize/--no-sanitize``: every stage under compute-sanitizer first; None: where it exists.
    sanitize: bool | None = None
    #: Seconds each compute-sanitizer tool may take for all its stages.
    sanitize_timeout_s: float = 600.0
    #: Reuse results from the result cache (profile, validation, sanitizer, peers, experiments,
    #: the configuration choice) whose key matches; False: no cache at all.
    cache: bool = True
    #: ``run --fresh``: redo everything (nothing read from the cache; results still stored).
    fresh: bool = False
    #: Choose the configuration of the stages that have candidates by timing them at this shape
    #: (``Case.choose_configs``); False: the manifest's configuration.
    choose: bool = True

    def __post_init__(self) -> None:
        if self.dtype not in ALL_DTYPES:
            raise InputError(f"unknown dtype {self.dtype!r}", f"use one of {', '.join(ALL_DTYPES)}")
        if any(v < 1 for v in (*self.size.values(), *self.profile_size.values())):
            raise InputError(f"sizes must be positive, got {self.size} and {self.profile_size}",
                             "give every dimension as 1 or more")
        if self.repeats < 20:
            raise InputError(f"--repeats must be at least 20 for a stable median, got {self.repeats}",
                             "pass --repeats 20 or more (the default is 30)")
        if self.clock_control not in ("none", "base"):
            raise InputError(f"--clock-control must be 'none' or 'base', not {self.clock_control!r}",
                             "pass --clock-control none")
        for option, seconds in (("--ncu-timeout", self.ncu_timeout_s), ("--sanitize-timeout", self.sanitize_timeout_s)):
            if not (0 < seconds < math.inf):  # NaN fails too: a wait on it never ends
                raise InputError(f"{option} must be a positive number of seconds, got {seconds}",
                                 f"e.g. {option} 600 (the default)")
