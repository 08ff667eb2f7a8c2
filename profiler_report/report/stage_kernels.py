"""A stage of several launches on the page: its kernels and their shares of its time.

One frozen dataclass (:class:`StageKernels`) built by :func:`stage_kernels` from the analysis'
per-launch table (:func:`~profiler_report.analysis.launch_groups.kernel_shares`), laid out by
``templates/_stage_kernels.html.j2`` inside the stage's section. A stage of one launch has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from profiler_report.analysis.launch_groups import STAGE_RULE
from profiler_report.util.fmt import fmt


@dataclass(frozen=True)
class StageKernels:
    """The launches of one stage's profiled call, in launch order: ``rows`` of (kernel, grid,
    block, ncu duration, share of the stage's summed duration, DRAM bytes read + written, the
    demangled name cut to :data:`NAME_CHARS`) as display text, and ``note``: how the stage's own
    figures combine them."""

    rows: tuple[tuple[str, str, str, str, str, str, str], ...]
    note: str


#: Characters of a demangled kernel name the table shows (PyTorch's run to several hundred).
NAME_CHARS = 160


def _cut(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[:NAME_CHARS] + " ..."


def stage_kernels(kernels: pd.DataFrame, stage: str) -> StageKernels | None:
    """The :class:`StageKernels` of ``stage``; None when it launched one kernel (or the capture
    has no per-launch table)."""
    if kernels is None or kernels.empty:
        return None
    mine = kernels[kernels["stage"] == stage]
    if len(mine) < 2:
        return None
    rows = tuple((str(r.kernel), str(r.grid), str(r.block), fmt(r.duration_us, "us"), fmt(r.share_pct, "%"),
                  fmt(r.dram_bytes, "byte"), _cut(str(r.demangled))) for r in mine.itertuples())
    return StageKernels(rows, f"This stage's call launched {len(mine)} kernels, each profiled (ncu results in its "
                              f"NVTX range). Its figures above are those of {STAGE_RULE}.")
