"""What the capture commands (render, summary, check, diff) share: the ladder options made into
``load_run``'s keyword arguments, and the one-line warning when two runs are not comparable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from profiler_report.util.options import parse_stage_labels


def ladder(stage_opts: tuple[str, ...], ceiling_opts: tuple[str, ...], case_ref: str | None,
           allow_mixed: bool = False) -> dict[str, Any]:
    """load_run's keyword arguments for the ladder options (``allow_mixed`` is checked on the
    loaded run: :func:`~profiler_report.analysis.run.refuse_mixed`)."""
    from profiler_report.model.registry import get_case

    return {"labels": parse_stage_labels(stage_opts) or None,
            "ceilings": parse_stage_labels(ceiling_opts, "--ceiling") or None,
            "case": get_case(case_ref) if case_ref else None}


def one_or_many(paths: tuple[Path, ...]) -> Path | list[Path]:
    return paths[0] if len(paths) == 1 else list(paths)


def names(path: Path | list[Path]) -> str:
    return " ".join(str(p) for p in path) if isinstance(path, list) else str(path)


def warn_not_comparable(old: Path | list[Path], new: Path | list[Path], diffs: list[str]) -> None:
    """On stderr: why ``old`` and ``new`` are not comparable (nothing when ``diffs`` is empty)."""
    if diffs:
        click.echo(f"warning: {names(old)} and {names(new)} are not comparable: {'; '.join(diffs)} "
                   "(--strict refuses)", err=True)
