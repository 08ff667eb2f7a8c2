"""Run settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from profiler_report.errors import InputError
from profiler_report.util.dtypes import DTYPES


@dataclass
class RunConfig:
    """Settings of a live run (``profiler-report run``)."""

    rows: int = 8192
    cols: int = 8192
    dtype: str = "float32"
    profile_rows: int | None = None  # matrix size under ncu; None: same as rows/cols
    profile_cols: int | None = None
    repeats: int = 30
    warmup: int = 5
    buffers: int = 3
    clock_control: str = "none"
    ncu: str | None = None
    ncu_timeout_s: float = 600.0
    counters: bool = True
    stages: list[str] = field(default_factory=list)  # empty: all manifest stages

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise InputError(f"unknown dtype {self.dtype!r}", f"use one of {', '.join(DTYPES)}")
        if self.rows < 1 or self.cols < 1:
            raise InputError(f"matrix size must be positive, got {self.rows}x{self.cols}")
        if self.repeats < 20:
            raise InputError(f"--repeats must be at least 20 for a stable median, got {self.repeats}")
        if self.clock_control not in ("none", "base"):
            raise InputError(f"--clock-control must be 'none' or 'base', not {self.clock_control!r}")
