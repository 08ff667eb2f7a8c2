"""Which launch is which stage, and which case made a capture."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import pandas as pd

from profiler_report.capture.model import Capture
from profiler_report.errors import InputError
from profiler_report.model.base import Case
from profiler_report.model.manifest import Manifest
from profiler_report.model.ranges import own_range
from profiler_report.model.registry import REGISTRY, get_case
from profiler_report.util.frames import tuples


def assign_stages(capture: Capture, labels: list[tuple[str, str]] | None = None,
                  manifest: Manifest | None = None, ceilings: list[tuple[str, str]] | None = None,
                  name_by_file: bool = False) -> pd.DataFrame:
    """One row per launch with its ``stage`` label and ``role`` ("stage" or "ceiling"), launch order.

    ``ceilings`` (``--ceiling`` LABEL, REGEX pairs) are checked first: a launch one of them
    matches is a ceiling under that label, never a stage. Then labels, first match wins:
    ``labels`` (LABEL, REGEX) pairs searched in the kernel's names (:func:`kernel_names`: short,
    display and mangled) and the NVTX range; our own NVTX ranges ``pr_<stage>``; in a ladder of
    several files (:func:`~profiler_report.capture.model.merge_captures`) the file's label for a
    file of one launch, and with ``name_by_file`` ``STAGE (FILE)`` for an own stage that several files
    hold (a profiled sweep: one capture per point); else the kernel name (``#2``... when repeated).
    Every launch inside one own NVTX range of one file is that stage's (a Python stage's call
    launches several kernels): they share its label (:mod:`~profiler_report.analysis.launch_groups`).
    Launches that match no ``labels`` entry are dropped when ``labels`` is given; so are, with a
    ``manifest`` and no ``labels``, launches in no ``pr_<case>.<stage>`` range (nothing says which
    stage they are: :mod:`~profiler_report.analysis.coverage` lists them).

    Raises:
        InputError: a REGEX is invalid, or a ``--stage`` / ``--ceiling`` option matched no launch
            (the message names the closest kernel names).
    """
    launches = capture.launches()
    _labels_once(labels, ceilings)
    compiled = _compiled(labels, "--stage")
    ceiling_rx = _compiled(ceilings, "--ceiling")
    per_file = launches["launch_id"].map(capture.origins).value_counts() if capture.origins else pd.Series()
    repeated = _own_stages_in_several_files(launches, capture.origins) if name_by_file and not compiled else set()
    namer = _Namer()
    out: list[dict[str, Any]] = []
    used: set[str] = set()
    for row in tuples(launches):
        ceiling = matching_label(row, ceiling_rx)
        stage = ceiling if ceiling is not None else _label(row, compiled)
        ours = own_range(row.nvtx_range or "") is not None
        if stage is None or (manifest is not None and not compiled and ceiling is None and not ours):
            continue  # a launch of a case's capture outside every range: no stage (analysis.coverage lists it)
        used.add(stage)
        origin = capture.origins.get(row.launch_id)
        if ceiling is None and not compiled and origin and per_file.get(origin) == 1 and not ours:
            stage = origin  # one capture per version: the file names the stage
        base = stage
        if ceiling is None and stage in repeated and ours:
            stage = f"{stage} ({origin})"  # one capture per sweep point: the file names the point
        stage = namer.name(stage, origin, not compiled and ours)
        role = "ceiling" if ceiling is not None or (manifest is not None and base == manifest.ceiling.id) else "stage"
        out.append({**row._asdict(), "stage": stage, "role": role})
    _all_options_used(used, labels, ceilings, sorted(set(launches["kernel"])))
    return pd.DataFrame(out).drop(columns=["Index"], errors="ignore")


class _Namer:
    """Stage labels made unique: ``LABEL#2``... for a repeated label, except that every launch of one
    own NVTX range of one file (one call of a Python stage) shares its first launch's label."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.ranged: dict[tuple[str, str | None], str] = {}  # (own stage, file) -> its label

    def name(self, stage: str, origin: str | None, ours: bool) -> str:
        """The label of a launch labelled ``stage`` from file ``origin``; ``ours``: in an own NVTX range."""
        key = (stage, origin)
        if ours and key in self.ranged:
            return self.ranged[key]  # another launch of the same call: one stage of several launches
        self.seen[stage] = self.seen.get(stage, 0) + 1
        if self.seen[stage] > 1:
            stage = f"{stage}#{self.seen[stage]}"
        if ours:
            self.ranged[key] = stage
        return stage


def _all_options_used(used: set[str], labels: list[tuple[str, str]] | None,
                      ceilings: list[tuple[str, str]] | None, names: list[str]) -> None:
    """InputError for the first ``--ceiling`` / ``--stage`` option whose label no launch took."""
    for option, pairs in (("--ceiling", ceilings or []), ("--stage", labels or [])):
        for label, pattern in pairs:
            if label not in used:
                raise InputError(f"{option} {label}={pattern} matches no launch"
                                 + (" that an earlier option did not take" if option == "--stage" else ""),
                                 "closest kernel names in the capture: " + ", ".join(closest_names(pattern, names)))


def _own_stages_in_several_files(launches: pd.DataFrame, origins: dict[int, str]) -> set[str]:
    """Stage ids of our own NVTX ranges that launches of more than one file of a ladder hold."""
    files: dict[str, set[str]] = {}
    for lid, rng in zip(launches["launch_id"], launches["nvtx_range"], strict=True):
        own = own_range(rng or "")
        if own and lid in origins:
            files.setdefault(own[1], set()).add(origins[lid])
    return {stage for stage, where in files.items() if len(where) > 1}


def _compiled(pairs: list[tuple[str, str]] | None, option: str) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for label, pattern in pairs or []:
        try:
            out.append((label, re.compile(pattern)))
        except re.error as exc:
            raise InputError(f"{option} {label}={pattern}: bad regular expression ({exc})",
                             f"escape regex characters, e.g. {option} naive='^transpose_naive$'") from exc
    return out


def closest_names(pattern: str, names: list[str], n: int = 3) -> list[str]:
    """The ``n`` names most like ``pattern`` (its regex syntax dropped), by difflib's ratio."""
    plain = re.sub(r"[\^$.*+?()\[\]{}|\\]", "", pattern)
    return difflib.get_close_matches(plain, names, n=n, cutoff=0.0) or names[:n]


def kernel_names(row: Any) -> tuple[str, ...]:
    """The names a kernel pattern is searched in (``--stage`` and ``[kernel."REGEX"]``): the short
    name, the C++ display (demangled) name, e.g. ``void transpose_tile<32, 8>(const float *, ...)``,
    and the mangled name where the capture holds it."""
    return tuple(str(getattr(row, n, "") or "") for n in ("kernel", "demangled", "mangled"))


def matching_label(row: Any, compiled: list[tuple[str, re.Pattern[str]]]) -> str | None:
    """The label of the first (LABEL, REGEX) pair whose REGEX is found in one of the launch's
    :func:`kernel_names` or its NVTX range (``--stage`` and ``--ceiling`` alike); None if none is."""
    for label, rx in compiled:
        if any(rx.search(name) for name in (*kernel_names(row), str(row.nvtx_range or ""))):
            return label
    return None


def _labels_once(labels: list[tuple[str, str]] | None, ceilings: list[tuple[str, str]] | None) -> None:
    """InputError when one label is given by two options (a report would rename one ``LABEL#2``)."""
    given: dict[str, str] = {}
    for option, pairs in (("--ceiling", ceilings or []), ("--stage", labels or [])):
        for label, pattern in pairs:
            if label in given:
                raise InputError(f"label {label!r} is given twice ({given[label]} and {option} {label}={pattern})",
                                 "give each --stage and --ceiling its own label; one REGEX can match several "
                                 "kernels with |, e.g. --stage a='naive|smem'")
            given[label] = f"{option} {label}={pattern}"


def _label(row: Any, compiled: list[tuple[str, re.Pattern[str]]]) -> str | None:
    if compiled:
        return matching_label(row, compiled)
    own = own_range(row.nvtx_range or "")
    return own[1] if own else row.kernel


def own_case(capture: Capture, provenance: dict[str, Any] | None = None, case: Case | None = None) -> Case | None:
    """The case that made ``capture``: every launch sits in a ``pr_<case>.<stage>`` range (or a
    legacy ``pr_<stage>`` one, a transpose) of one case, or, in a capture of one file, every
    launch in a range does (the others are unresolved); else None (a foreign capture).

    A built-in case is found by its name; a user's case is ``case`` (``--case DIR``) or the folder
    provenance.json names (``case_dir``, relative to the working directory or absolute).

    Raises:
        InputError: ``case`` is not the case the ranges name; or the ranges name a case that is
            not built in and whose folder is neither given nor recorded.
    """
    found = {own_range(str(r or "")) for r in capture.launches()["nvtx_range"]}
    cases = {f[0] for f in found if f is not None}
    # One file whose launches name one case, some in no range (a corrupted capture): still that
    # case's, with those launches unresolved. A ladder of several files keeps the strict rule.
    partial = None in found and len(cases) == 1 and len(set(capture.origins.values())) <= 1
    if (None in found and not partial) or len(cases) != 1:
        if case is not None:
            raise InputError(f"{capture.path} was not made by `profiler-report run` (its launches are not in "
                             "pr_<case>.<stage> NVTX ranges), so --case cannot name its stages",
                             "drop --case; name the stages with --stage LABEL=REGEX and judge expected effects "
                             "with --expect stages.toml")
        return None
    name = cases.pop()
    if case is not None:
        if case.name != name:
            raise InputError(f"{capture.path} was made by case {name!r}, not {case.name!r} (--case {case.ref})",
                             f"pass the folder of case {name!r}, or drop --case")
        return case
    if name in REGISTRY:
        return get_case(name)
    recorded = str((provenance or {}).get("case_dir") or "")
    if recorded and (provenance or {}).get("case") == name and Path(recorded).expanduser().is_dir():
        return get_case(recorded)
    where = f" (provenance.json names {recorded}, which is not a folder here)" if recorded else ""
    raise InputError(f"{capture.path} was made by case {name!r}, which is not built in{where}",
                     f"pass the case folder: --case path/to/{name}")
