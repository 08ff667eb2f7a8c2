"""Experiments beside a case's ladder: kernels profiled once each, not stages.

An :class:`Experiment` is a set of points (one kernel launch each) that a live run profiles in one
extra ncu process, with only the metrics it needs (:attr:`Experiment.ncu_options`, not
``--set full``), into ``<report folder>/<id>.ncu-rep``; the target's validation of each point goes
to ``<id>.json`` beside it. The report gets one section per experiment: :meth:`Experiment.table`,
from that capture (or, when it is absent, what the experiment predicts without it). A case lists
its experiments in :meth:`~profiler_report.model.base.Case.experiments` (none by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from profiler_report.model.ranges import nvtx_range_name, own_range

if TYPE_CHECKING:
    from profiler_report.capture.model import Capture

#: What the target prints before the JSON of its per-point validation (parsed from ncu's output).
RESULT_PREFIX = "profiler-report-experiment "


@dataclass
class ExperimentRow:
    """One point of an experiment's table: its cells (as the header orders them), whether what was
    measured disagrees with what was predicted, and why."""

    point: str
    cells: list[str]
    mismatch: bool = False
    note: str = ""


@dataclass
class ExperimentTable:
    """An experiment as the report shows it. ``values``: point id -> measured figures (headline
    column names of :mod:`profiler_report.metrics`), what claims about a point are judged on;
    ``recorded``: whether its capture was there."""

    id: str
    title: str
    intro: str
    header: list[str]
    rows: list[ExperimentRow]
    notes: list[str] = field(default_factory=list)
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    recorded: bool = False


class Experiment:
    """One experiment. Subclasses set :attr:`id`, :attr:`title`, :attr:`ncu_options` and implement
    :meth:`point_ids`, :meth:`run_target` (GPU) and :meth:`table`."""

    id: str = ""
    title: str = ""
    #: ncu options that pick what to collect (``--section``/``--metrics``), instead of ``--set full``.
    ncu_options: tuple[str, ...] = ()

    def point_ids(self) -> list[str]:
        raise NotImplementedError

    def range_name(self, case: str, point: str) -> str:
        """The NVTX range around ``point``'s profiled launch: ``pr_<case>.<experiment>.<point>``."""
        return nvtx_range_name(case, f"{self.id}.{point}")

    def point_of(self, nvtx_range: str) -> str | None:
        """The point id of a launch's NVTX stack, or None when it is not one of this experiment's."""
        found = own_range(nvtx_range)
        if found is None or not found[1].startswith(self.id + "."):
            return None
        return found[1][len(self.id) + 1:]

    def run_target(self, case: Any) -> list[dict[str, Any]]:
        """GPU, in ncu's target process: validate every point, then launch each once inside its
        NVTX range. Returns ``[{"point", "correct", "message"}]``."""
        raise NotImplementedError

    def precompile(self) -> None:
        """GPU (the compiler; no kernel runs): compile the kernels :meth:`run_target` will launch, so
        that its process finds them in the compiler's disk cache. A live run calls it beside the
        compute-sanitizer, well before the experiment's ncu run. Default: nothing."""

    def table(self, capture: Capture | None, validation: list[dict[str, Any]] | None) -> ExperimentTable:
        """The report's section: measured from ``capture`` (None: not recorded) beside predicted."""
        raise NotImplementedError
