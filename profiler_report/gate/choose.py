"""Which thresholds file gates a run (``check``): ``--thresholds``, else ``--case``'s own, else the
case that made the capture's own (``kernels/<case>/thresholds.toml``); a capture made elsewhere
(no case of ours) is gated on the default case's file, and a capture of a case that has no file is
refused rather than gated on another case's stages.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from profiler_report.errors import InputError
from profiler_report.gate.grammar import Thresholds, load_thresholds
from profiler_report.model.registry import DEFAULT_CASE, get_case

if TYPE_CHECKING:
    from profiler_report.analysis.run import Run


def given_thresholds(path: Path | None, case_ref: str | None) -> Thresholds | None:
    """The file named before the capture is read (``--thresholds``, or ``--case``'s own), parsed
    (a bad file fails before the read); None when the capture's case is to choose.

    Raises:
        InputError: ``--case`` names a case without a thresholds.toml.
        ThresholdsError: the file is missing or does not parse.
    """
    if path is None and case_ref is not None:
        path = get_case(case_ref).thresholds()
        if path is None:
            raise InputError(f"case {case_ref} has no thresholds.toml", "pass --thresholds FILE")
    return load_thresholds(path) if path is not None else None


def own_thresholds(run: Run) -> Thresholds:
    """The thresholds of the case that made ``run`` (found from its NVTX ranges or provenance).

    Raises:
        InputError: the capture's provenance names a case that has no thresholds.toml here.
        ThresholdsError: the file does not parse.
    """
    own = run.case.thresholds() if run.case is not None else None
    if own is not None:
        return load_thresholds(own)
    made_by = str(run.provenance.get("case", DEFAULT_CASE))
    if run.case is not None and run.case.name != DEFAULT_CASE or made_by != DEFAULT_CASE:
        folder = run.provenance.get("case_dir")
        raise InputError(f"{run.path} was made by case {made_by!r}, which has no thresholds.toml here "
                         f"(the default, kernels/{DEFAULT_CASE}/thresholds.toml, gates the {DEFAULT_CASE} and "
                         "captures made elsewhere)",
                         f"pass --thresholds FILE, or write {folder or 'the case folder'}/thresholds.toml "
                         "(`profiler-report new-case DIR` writes one to start from)")
    return load_thresholds()  # the default case's file
