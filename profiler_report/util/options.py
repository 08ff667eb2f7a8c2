"""Command-line options shared by several commands: ``--format`` from a writers registry, the
ladder options (``--stage``, ``--ceiling``, ``--case``), and option values parsed into data
(``LABEL=REGEX`` stage labels, ``DIM=N`` sizes), each bad value one
:class:`~profiler_report.errors.InputError` line naming the option and its fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from profiler_report.errors import InputError
from profiler_report.util.writers import Writers


def parse_stage_labels(values: tuple[str, ...], option: str = "--stage") -> list[tuple[str, str]]:
    """``LABEL=REGEX`` options -> [(label, regex)].

    Raises:
        InputError: an option lacks ``=`` or has an empty label.
    """
    out = []
    for v in values:
        label, sep, pattern = v.partition("=")
        if not sep or not label.strip() or not pattern:
            raise InputError(f"{option} {v!r} is not LABEL=REGEX", f"e.g. {option} naive=transpose_naive")
        out.append((label.strip(), pattern))
    return out


def parse_dims(values: tuple[str, ...], option: str = "--size") -> dict[str, int]:
    """``DIM=N`` options -> {dim: n}.

    Raises:
        InputError: an option is not DIM=N with N an integer, or gives a dimension a second,
            different value.
    """
    out: dict[str, int] = {}
    for v in values:
        dim, sep, n = v.partition("=")
        if not sep or not dim.strip() or not re.fullmatch(r"[0-9]+", n.strip()):  # isdigit() takes '²'
            raise InputError(f"{option} {v!r} is not DIM=N with N >= 0",
                             f"one {option} per dimension, e.g. {option} rows=4096 {option} cols=8192")
        dim = dim.strip()
        if dim in out and out[dim] != int(n):
            raise InputError(f"{option} gives {dim} twice: {out[dim]} and {int(n)}", f"give {dim} once")
        out[dim] = int(n)
    return out


def sized(values: tuple[str, ...], option: str, **named: int | None) -> dict[str, int]:
    """``DIM=N`` options of ``option`` merged with the named ones (``--rows``/``--cols``, or with
    ``option`` ``--profile-size`` ``--profile-rows``/``--profile-cols``) -> {dim: n}.

    Raises:
        InputError: as :func:`parse_dims`, or a dimension given both ways with different values.
    """
    dims = parse_dims(values, option)
    prefix = option[2:].removesuffix("size")
    for dim, n in named.items():
        if n is None:
            continue
        if dim in dims and dims[dim] != n:
            raise InputError(f"{option} {dim}={dims[dim]} and --{prefix}{dim} {n} disagree",
                             f"give {dim} once: --{prefix}{dim} or {option} {dim}=N")
        dims[dim] = n
    return dims


class _FormatChoice(click.Choice):
    """``--format``'s choices: the names of a writers registry, loaded only when the option is
    parsed or its help shown (so ``check`` never loads the summary's writers, nor they the gate)."""

    def __init__(self, load: Callable[[], Writers[Any]]) -> None:
        self._load = load
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._load().names())

    @choices.setter
    def choices(self, value: Any) -> None:  # click's __init__ assigns it; the registry is the list
        pass


class _FormatOption(click.Option):
    """``--format``: its help lists every writer's own help line, from the registry."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        assert isinstance(self.type, _FormatChoice)
        self.help = self.type._load().help()
        self.default = self.type.choices[0]  # the lambda's value, shown as itself rather than "(dynamic)"
        return super().get_help_record(ctx)


def format_option(load: Callable[[], Writers[Any]], **kw: Any) -> Any:
    """``--format`` with its choices, default (the first writer) and help from a writers registry."""
    choice = _FormatChoice(load)
    return click.option("--format", "fmt", cls=_FormatOption, type=choice, show_default=True,
                        default=lambda: choice.choices[0], **kw)


def ladder_options(fn: Any = None, *, gate: bool = False) -> Any:
    """``--stage``, ``--ceiling`` and ``--case``: how a capture's launches become a ladder (``gate``:
    for ``check``, whose --case also picks the thresholds)."""
    if fn is None:
        return lambda f: ladder_options(f, gate=gate)
    gates = " `check` then gates on the case's thresholds.toml unless --thresholds is given." if gate else ""
    for opt in reversed((
        click.option("--stage", "stage_opts", multiple=True, metavar="LABEL=REGEX",
                     help="Name a stage: launches whose kernel name (short, C++ display or mangled) or NVTX "
                          "range matches REGEX. Repeatable; "
                          "without it every launch is a stage, in launch order (one capture per file: the "
                          "file's name). An option that matches nothing is an error."),
        click.option("--ceiling", "ceiling_opts", multiple=True, metavar="LABEL=REGEX",
                     help="Mark reference launches (a copy) as a ceiling: drawn as one, never a stage nor the "
                          "baseline. Repeatable."),
        click.option("--allow-mixed", is_flag=True,
                     help="Accept a ladder of captures that are not comparable (GPU, size, dtype: the check of "
                          "`diff --strict`): shown side by side, with no ratio between two captures. Default: exit 2."),
        click.option("--case", "case_ref", default=None,
                     help="The case that made the capture: a case folder (or built-in name); default: from "
                          "its NVTX ranges and provenance.json." + gates),
    )):
        fn = opt(fn)
    return fn


def old_and_new(captures: tuple[Path, ...], old_opts: tuple[Path, ...], new_opts: tuple[Path, ...],
                tolerance: float) -> tuple[Path | list[Path], Path | list[Path]]:
    """``diff``'s two sides: OLD NEW, or the --old ... and --new ... ladders (a list for several).

    Raises:
        InputError: the tolerance is NaN, or not exactly one of the two forms is given.
    """
    if tolerance != tolerance:  # NaN passes every range check
        raise InputError("--tolerance must be a number, not nan", "e.g. --tolerance 0.05")
    if captures and (old_opts or new_opts) or not captures and not (old_opts and new_opts) \
            or captures and len(captures) != 2:
        raise InputError("diff takes OLD NEW, or --old CAPTURE... --new CAPTURE...",
                         "e.g. profiler-report diff old.ncu-rep new.ncu-rep")
    old = (old_opts[0] if len(old_opts) == 1 else list(old_opts)) if old_opts else captures[0]
    new = (new_opts[0] if len(new_opts) == 1 else list(new_opts)) if new_opts else captures[1]
    return old, new
