"""The Python API for notebooks and scripts: :func:`load` a capture, then read its tables, check it
against a thresholds file, or render its report.

    >>> import profiler_report
    >>> prof = profiler_report.load("reports/h200/profile.ncu-rep")
    >>> df = prof.summary()                      # one row per stage; units in df.attrs["units"]
    >>> df[["stage", "shared_excessive_wavefronts", "event_gbps"]]
    >>> prof.check("thresholds.toml")            # one row per rule and stage, with its verdict
    >>> prof.render("out/")                      # index.html, summary.csv, summary.json

Built on the same code as the commands: :func:`~profiler_report.analysis.run.load_run` (the one
loader: each capture read once) and :func:`~profiler_report.report.build.render_capture`. Nothing
here prints or exits: bad input raises the project's errors
(:class:`~profiler_report.errors.ProfilerReportError` and its subclasses, each with ``message``,
``hint`` and ``exit_code``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.analysis.run import Run, load_run
from profiler_report.analysis.summary import summary_columns

if TYPE_CHECKING:
    from profiler_report.model.base import Case

#: Units of the per-instruction table's value columns (ncu's per-PC metrics, see :meth:`Profile.instructions`).
INSTRUCTION_UNITS = {"pc_offset": "byte", "line": "", "inst_executed": "inst", "shared_wavefronts": "wavefront",
                     "shared_ideal_wavefronts": "wavefront", "shared_excessive_wavefronts": "wavefront"}

#: ``stages`` of :func:`load`: {label: regex} or (label, regex) pairs.
Stages = Mapping[str, str] | Iterable[tuple[str, str]]


def _labels(stages: Stages | None) -> list[tuple[str, str]] | None:
    if stages is None:
        return None
    pairs = list(stages.items()) if isinstance(stages, Mapping) else [tuple(p) for p in stages]
    return [(str(label), str(pattern)) for label, pattern in pairs] or None


def _with_units(frame: pd.DataFrame, units: dict[str, str], sources: dict[str, str] | None = None) -> pd.DataFrame:
    frame.attrs["units"] = {c: units[c] for c in frame.columns if c in units}
    if sources is not None:
        frame.attrs["sources"] = {c: sources[c] for c in frame.columns if c in sources}
    return frame


class Profile:
    """One capture, loaded: its per-stage table, per-instruction table, Nsight Compute findings,
    and the gate and the report on it. Make one with :func:`load`.

    Attributes:
        path: the capture file.
        run: the loaded :class:`~profiler_report.analysis.run.Run` (capture, analysis, sidecar
            files), for anything the methods do not cover.
    """

    def __init__(self, run: Run, labels: list[tuple[str, str]] | None = None) -> None:
        self.run = run
        self.path = run.path
        self._labels = labels

    def __repr__(self) -> str:
        return f"<profiler_report.Profile {self.path} ({len(self.stages)} stages)>"

    @property
    def stages(self) -> list[str]:
        """Every stage label (ceiling rows included), in launch order."""
        return self.run.stages()

    @property
    def case(self) -> Case | None:
        """The case study that made the capture (found from its NVTX ranges); None for a capture
        made elsewhere or labelled with ``stages``."""
        return self.run.case

    @property
    def provenance(self) -> dict[str, Any]:
        """provenance.json beside the capture (GPU, driver, ncu version, clocks, size, dtype...); {} when absent."""
        return dict(self.run.provenance)

    @property
    def units(self) -> dict[str, str]:
        """Unit of every measured column of :meth:`summary` ("" for a count without a unit)."""
        return {name: col["unit"] for name, col in summary_columns().items()}

    def summary(self) -> pd.DataFrame:
        """The per-stage table, as ``profiler-report summary`` prints it: one row per stage in
        launch order (``role`` "stage" or "ceiling").

        Columns: stage, role, kernel, launch_id, grid, block, every headline metric of the
        registry (:mod:`profiler_report.metrics`: e.g. ``shared_excessive_wavefronts`` from
        ``derived__memory_l1_wavefronts_shared_excessive``, ``global_store_efficiency_pct`` =
        ``smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio / 32``, ``duration_us``
        = ``gpu__time_duration.sum``), the load/store split of the excessive wavefronts, the top
        stall reasons and, with a timings.json beside the capture, the event-timing columns
        (``event_median_us``, ``event_gbps``, ``pct_of_memcpy``, ...). Values are in the units of
        ``df.attrs["units"]`` (column -> unit, e.g. "us", "GB/s", "%", "wavefront"); the ncu
        metric or formula of each column is in ``df.attrs["sources"]``. A metric the capture
        lacks is NaN, never 0. The frame is a copy: change it freely.
        """
        cols = summary_columns()
        return _with_units(self.run.summary.copy(), {k: v["unit"] for k, v in cols.items()},
                           {k: v["source"] for k, v in cols.items()})

    def instructions(self) -> pd.DataFrame:
        """The per-instruction table (one row per SASS instruction kept, ``.ncu-rep`` captures
        with SourceCounters only; empty otherwise).

        Columns: stage, launch_id, pc_offset (bytes from the kernel's first instruction), sass,
        side ("load", "store", "other shared" or ""), file, line (0 without ``-lineinfo``),
        inst_executed (``inst_executed``), shared_wavefronts (``memory_l1_wavefronts_shared``),
        shared_ideal_wavefronts (``memory_l1_wavefronts_shared_ideal``),
        shared_excessive_wavefronts (``derived__memory_l1_wavefronts_shared_excessive``), each
        per PC. Kept: every instruction with a shared-memory wavefront value plus the 20 most
        executed of each launch. Units in ``df.attrs["units"]``.
        """
        source = self.run.capture.source
        stage_of = self.run.analysis.stages.set_index("launch_id")["stage"]
        frame = source.copy() if source is not None else pd.DataFrame()
        if frame.empty:
            return _with_units(pd.DataFrame(columns=["stage", *frame.columns]), INSTRUCTION_UNITS)
        frame = frame[frame["launch_id"].isin(stage_of.index)]  # launches left out of every stage go
        frame.insert(0, "stage", frame["launch_id"].map(stage_of))
        return _with_units(frame.reset_index(drop=True), INSTRUCTION_UNITS)

    def findings(self) -> pd.DataFrame:
        """Nsight Compute's guided-analysis rule results, one row per rule and stage.

        Columns: stage, launch_id, rule (ncu's rule identifier, e.g. "SharedMemoryConflicts"),
        section, type ("warning", "optimization", ...), title, message, speedup_pct (ncu's
        estimated speed-up, %; NaN when it gives none), speedup_type ("local" or "global").
        """
        rules = self.run.analysis.rules
        cols = ["stage", *[c for c in rules.columns if c != "stage"]]
        return _with_units(rules[cols].reset_index(drop=True), {"speedup_pct": "%"})

    def check(self, thresholds: str | Path | None = None, baseline: str | Path | Profile | None = None,
              missing: str = "fail") -> pd.DataFrame:
        """Judge the capture against a thresholds file, as ``profiler-report check`` does.

        Args:
            thresholds: the TOML file (default: ``thresholds.toml`` in the current directory).
            baseline: an earlier capture (path or :class:`Profile`) for rules relative to ``baseline``.
            missing: "fail" (a rule whose metric is not measured fails) or "warn".

        Returns:
            One row per rule and stage: stage, rule, metric, measured, limit, unit (of measured
            and limit), verdict ("pass", "fail", "not measured", "skipped"), message. ``attrs``:
            ``exit_code`` (0 passed, 1 failed: what ``check`` would exit with), ``passed``,
            ``thresholds`` (the file read).

        Raises:
            ThresholdsError: the file is missing, does not parse, or names an unknown metric,
                unit or stage.
            ReportUnreadableError: the baseline cannot be read.
        """
        from profiler_report import gate

        if missing not in ("fail", "warn"):
            raise ValueError(f"missing must be 'fail' or 'warn', not {missing!r}")
        rules = gate.load_thresholds(Path(thresholds) if thresholds is not None else None)
        base = baseline.run if isinstance(baseline, Profile) else \
            load_run(Path(baseline), self._labels) if baseline is not None else None
        results = gate.check_run(rules, self.run, base)
        frame = pd.DataFrame([vars(r) for r in results],
                             columns=["stage", "rule", "metric", "measured", "limit", "unit", "verdict", "message"])
        frame["measured"] = frame["measured"].astype(float)
        frame["limit"] = frame["limit"].astype(float)
        code = gate.exit_code(results, missing)
        frame.attrs.update(exit_code=code, passed=code == 0, thresholds=rules.path)
        return frame

    def render(self, out: str | Path, baseline: str | Path | None = None, tolerance: float = 0.05,
               force: bool = False) -> list[Path]:
        """Write the report of this capture into ``out``: index.html (marked "Recorded capture"),
        summary.csv and summary.json (the schema of ``summary --format json``).

        Args:
            out: the output folder (made if missing).
            baseline: an earlier capture: adds "Compared with the baseline" (counts and ratios
                flagged beyond ``tolerance``, event timings beyond their p10..p90 spread).
            force: write even when ``out`` holds a live run's report (whose page would be replaced).

        Returns:
            The files written.

        Raises:
            InputError: ``out`` holds a live run's report and not ``force``.
            ReportUnreadableError: the baseline cannot be read.
            OSError: ``out`` cannot be written.
        """
        from profiler_report.report.build import render_capture

        if not (isinstance(tolerance, int | float) and math.isfinite(tolerance) and tolerance >= 0):
            raise ValueError(f"tolerance must be a finite number >= 0, not {tolerance!r}")
        _, files, _ = render_capture(self.path, Path(out), labels=self._labels,
                                     baseline=Path(baseline) if baseline is not None else None,
                                     tolerance=float(tolerance), force=force, run=self.run)
        return files


def load(path: str | Path, stages: Stages | None = None) -> Profile:
    """Read and analyze a capture (a ``.ncu-rep``, or a raw- or details-page CSV export) and the
    sidecar files beside it (timings.json, provenance.json, validation.json, ...).

    Args:
        path: the capture.
        stages: name the stages, as ``--stage LABEL=REGEX``: {label: regex} or (label, regex)
            pairs; the regex is searched in the kernel name and the NVTX range, the first match
            wins. Default: the project's own captures by their NVTX ranges (their case's
            expectations judged), any other capture one stage per launch, by kernel name.

    Returns:
        A :class:`Profile`.

    Raises:
        ReportUnreadableError: the capture cannot be read (missing, empty, truncated, not a
            report, from an ncu newer than the installed reader).
        InputError: a sidecar file is corrupt, or a ``stages`` regex is bad or matches nothing.
    """
    labels = _labels(stages)
    return Profile(load_run(Path(path), labels), labels)
