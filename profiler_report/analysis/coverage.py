"""Which stages of its case a capture holds, and which consecutive stages are real steps.

A capture made by a case (its launches in ``pr_<case>.<stage>`` ranges) may lack stages: a run of
``--stages``, a capture trimmed by hand, a corrupted file that lost a launch's NVTX range. The
ratio between the two stages on either side of a missing one is the effect of several changes,
not of one stage: :class:`Coverage` says which stages are missing, which launches' ranges did not
resolve, and which stage follows a gap, so that no step, verdict or expected effect spans it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from profiler_report.errors import InputError, StagesMissingError
from profiler_report.model.manifest import Manifest


@dataclass(frozen=True)
class Coverage:
    """The stages of ``case`` a capture holds.

    ``missing``: manifest stage ids (report order) with no launch in the capture; ``unresolved``:
    kernels of launches in no ``pr_<case>.<stage>`` range although the others are (left out of
    the ladder: nothing says which stage they are); ``gaps``: stage -> the missing stages between
    it and the stage before it in the capture (that pair is no step)."""

    case: str
    stage_ids: tuple[str, ...] = ()  # the case's stages, in report order
    missing: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    gaps: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def spans_gap(self, stage: str) -> bool:
        """Whether ``stage`` and the stage before it in the capture are not consecutive stages."""
        return stage in self.gaps

    def within(self) -> tuple[str, ...]:
        """The missing stages between the capture's first and last stage (those ``gaps`` hold):
        a capture lacking them is incomplete, not a prefix of a ladder that grew later."""
        inside = {s for gap in self.gaps.values() for s in gap}
        return tuple(s for s in self.missing if s in inside)

    def lacking(self, wanted: list[str] | None = None) -> tuple[str, ...]:
        """The stages a render must not do without: among ``wanted`` (``render --stages``) the
        missing ones; without it, those :meth:`within` the capture's span."""
        return self.within() if wanted is None else tuple(s for s in self.missing if s in wanted)

    def notes(self) -> list[str]:
        """One line each on the missing stages and the unresolved launches; [] when whole."""
        out = []
        within = self.within()
        if within:
            out.append(f"Stages {', '.join(within)} of case {self.case} are not in this capture: no step, verdict "
                       "or expected effect is taken across them (the stage after each gap is compared with "
                       "nothing).")
        beyond = [s for s in self.missing if s not in within]
        if beyond:
            out.append(f"Stages {', '.join(beyond)} of case {self.case} are not in this capture (it holds "
                       "the ladder up to or from its first and last stage).")
        if self.unresolved:
            out.append(f"{len(self.unresolved)} launch(es) of this capture ({', '.join(self.unresolved)}) are in no "
                       f"pr_{self.case}.<stage> NVTX range, though the others are: they are left out (the file may "
                       "be corrupt).")
        return out


def coverage(summary: pd.DataFrame, manifest: Manifest, case: str, unresolved: tuple[str, ...] = ()) -> Coverage:
    """:class:`Coverage` of a summary (role "stage" rows, launch order) against ``manifest``."""
    ids = manifest.stage_ids()
    present = [str(s) for s, r in zip(summary["stage"], summary["role"], strict=True) if r == "stage"]
    missing = tuple(s for s in ids if s not in present)
    gaps: dict[str, tuple[str, ...]] = {}
    for before, stage in zip(present, present[1:], strict=False):
        if before in ids and stage in ids:
            between = tuple(s for s in ids[ids.index(before) + 1:ids.index(stage)] if s in missing)
            if between:
                gaps[stage] = between
    return Coverage(case, tuple(ids), missing, unresolved, gaps)


def require_stages(cover: Coverage | None, wanted: list[str] | None, out: str) -> None:
    """For ``render``, once the report in ``out`` is written: the capture must hold the stages
    of ``wanted`` (``--stages``; None: those between its first and last stage, :meth:`Coverage.within`)
    and have no unresolved launch.

    Raises:
        InputError: ``wanted`` without a capture of a case, or naming no stage of the case.
        StagesMissingError: a stage is lacking or a launch is unresolved (exit 5).
    """
    if cover is None:
        if wanted:
            raise InputError("--stages needs a capture made by a case (its launches in pr_<case>.<stage> NVTX "
                             "ranges)", "drop --stages; name stages with --stage LABEL=REGEX")
        return
    unknown = [s for s in wanted or [] if s not in cover.stage_ids]
    if unknown:
        raise InputError(f"--stages names {', '.join(unknown)}, no stage of case {cover.case}",
                         f"use stages of {', '.join(cover.stage_ids)}")
    lacking = cover.lacking(wanted)
    lost = cover.unresolved if wanted is None else ()
    parts = [f"stages {', '.join(lacking)} of case {cover.case} are not in the capture"] if lacking else []
    parts += [f"{len(lost)} launch(es) ({', '.join(lost)}) are in no pr_{cover.case}.<stage> range"] if lost else []
    if parts:
        raise StagesMissingError(f"{'; '.join(parts)} (the report in {out} names them; no step is taken across a gap)")
