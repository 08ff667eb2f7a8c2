"""The page's whole-run sections after the stages: provenance, the baseline comparison, peers,
sweeps, the block-shape sweep, experiments, claims, correctness, compute-sanitizer and the
metric sources.

Each section is a small frozen dataclass with ``anchor`` (its id on the page), ``title`` (its
heading and its entry in the contents), ``template`` (the ``templates/_section_*.html.j2``
partial that lays it out, with the section as ``sec``) and ``folded`` (shown under a closed
``<details>``). A builder returns one, or None when the run has nothing for it;
:func:`~profiler_report.report.page.build_page` lists the builders in page order. Adding a
section is one dataclass, one partial and one line there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from profiler_report.metrics import HEADLINE, TIMING_COLUMNS
from profiler_report.model.experiment import ExperimentTable
from profiler_report.report.tables import bench_rows, pct_label


@dataclass(frozen=True)
class Provenance:
    """Where the numbers come from: (label, value) rows of provenance and the notes on reading
    the times."""

    rows: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    anchor: str = "environment"
    title: str = "Where these numbers come from"
    folded: bool = True
    template: ClassVar[str] = "_section_provenance.html.j2"


@dataclass(frozen=True)
class Comparison:
    """``render --baseline``: every compared metric (:func:`~profiler_report.analysis.compare.comparison_rows`)."""

    rows: tuple[dict[str, Any], ...]
    note: str
    anchor: str = "comparison"
    title: str = "Compared with the baseline"
    folded: bool = False
    template: ClassVar[str] = "_section_comparison.html.j2"


@dataclass(frozen=True)
class Peers:
    """bench.json's rows (:func:`~profiler_report.report.tables.bench_rows`) with each stage's
    timing-run figure beside its peer-run figure (``timing``: stage id -> the page's GB/s text)."""

    rows: tuple[dict[str, str], ...]
    note: str
    pct_label: str
    svg: str
    unit: str = "GB/s"  # of both figure columns: the ladder's (TFLOP/s for a case judged in it)
    anchor: str = "peers"
    title: str = "Versus peers"
    folded: bool = False
    template: ClassVar[str] = "_section_peers.html.j2"


@dataclass(frozen=True)
class Sweep:
    """The size x dtype sweep: sweep_table records with ``stage_label``, the verdicts, the chart."""

    rows: tuple[dict[str, Any], ...]
    verdicts: tuple[str, ...]
    svg: str
    anchor: str = "sweep"
    title: str = "Sweep: sizes and dtypes"
    folded: bool = True
    template: ClassVar[str] = "_section_sweep.html.j2"


@dataclass(frozen=True)
class Shapes:
    """The block-shape sweep: shape_table records, the verdicts, the chart."""

    rows: tuple[dict[str, Any], ...]
    verdicts: tuple[str, ...]
    svg: str
    anchor: str = "shapes"
    title: str = "Block-shape sweep"
    folded: bool = True
    template: ClassVar[str] = "_section_shapes.html.j2"


@dataclass(frozen=True)
class Experiment:
    """One of the case's experiments (the padding sweep) as its table."""

    table: ExperimentTable
    anchor: str
    title: str
    folded: bool = True
    template: ClassVar[str] = "_section_experiment.html.j2"


@dataclass(frozen=True)
class Claims:
    """The source articles' claims judged (analysis.claims.CLAIM_COLUMNS records)."""

    rows: tuple[dict[str, Any], ...]
    anchor: str = "claims"
    title: str = "The source articles' claims"
    folded: bool = True
    template: ClassVar[str] = "_section_claims.html.j2"


@dataclass(frozen=True)
class Validation:
    """validation.json's entries with their size, and how the case validates."""

    rows: tuple[dict[str, Any], ...]
    text: str
    anchor: str = "validation"
    title: str = "Correctness checks"
    folded: bool = True
    template: ClassVar[str] = "_section_validation.html.j2"


@dataclass(frozen=True)
class Sanitizer:
    """compute-sanitizer: the one-line result, each stage under each tool, other findings."""

    line: str
    rows: tuple[dict[str, Any], ...]
    tools: tuple[str, ...]
    other: tuple[str, ...]
    anchor: str = "sanitizer"
    title: str = "compute-sanitizer"
    folded: bool = True
    template: ClassVar[str] = "_section_sanitizer.html.j2"


@dataclass(frozen=True)
class Sources:
    """(column label, Nsight Compute source or formula) of every column the page shows."""

    rows: tuple[tuple[str, str], ...]
    anchor: str = "sources"
    title: str = "Metric sources"
    folded: bool = True
    template: ClassVar[str] = "_section_sources.html.j2"


def comparison(rows: list[dict[str, Any]], note: str) -> Comparison | None:
    return Comparison(tuple(rows), note) if rows else None


def peers(bench: list[dict[str, Any]] | None, note: str, timing: dict[str, str], svg: str,
          unit: str = "GB/s") -> Peers | None:
    if not bench:
        return None
    rows = tuple({**r, "timing_run": timing.get(r["name"], "") if r["kind"] in ("stage", "ceiling") else ""}
                 for r in bench_rows(bench, unit))
    return Peers(rows, note, pct_label(bench), svg, unit)


def sweep(rows: tuple[dict[str, Any], ...], verdicts: tuple[str, ...], svg: str) -> Sweep | None:
    return Sweep(rows, verdicts, svg) if rows else None


def shapes(rows: tuple[dict[str, Any], ...], verdicts: tuple[str, ...], svg: str) -> Shapes | None:
    return Shapes(rows, verdicts, svg) if rows else None


def experiments(tables: tuple[ExperimentTable, ...]) -> tuple[Experiment, ...]:
    return tuple(Experiment(t, f"experiment-{t.id}", t.title) for t in tables)


def claims(rows: tuple[dict[str, Any], ...]) -> Claims | None:
    return Claims(rows) if rows else None


def validation(entries: list[dict[str, Any]] | None, dims: tuple[str, ...], text: str) -> Validation | None:
    """validation.json entries with their size as the case writes it ('8192x8192')."""
    if not entries:
        return None
    rows = tuple({**v, "size": "x".join(str(v[d]) for d in dims if d in v) or "?"} for v in entries)
    return Validation(rows, text)


def sanitizer(doc: dict[str, Any] | None, line: str) -> Sanitizer | None:
    if not doc or not doc.get("stages"):
        return None
    return Sanitizer(line, tuple(doc.get("stages", [])), tuple(str(t.get("tool")) for t in doc.get("tools", [])),
                     tuple(str(o) for o in doc.get("other", [])))


def sources(timed: bool) -> Sources:
    return Sources(tuple((c.label, c.source) for c in (*HEADLINE, *(TIMING_COLUMNS if timed else ()))))
