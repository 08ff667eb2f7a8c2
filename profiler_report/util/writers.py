"""One output protocol: a :class:`Writer` turns a command's result into the text of one format,
and a :class:`Writers` registry holds a command's formats (``summary --format``, ``check
--format``, ``diff --format``, the data files ``render`` writes beside index.html). Adding a
format is one ``Writer`` in its registry: the command's ``--format`` choices, its help and the
dispatch all come from there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from profiler_report.errors import InputError

T = TypeVar("T")


@dataclass(frozen=True)
class Writer(Generic[T]):
    """One format: ``name`` (the ``--format`` value), ``file_name`` (the file it is written to in a
    report folder; "" when it is only printed), ``write(result) -> text`` and a line of help."""

    name: str
    file_name: str
    write: Callable[[T], str]
    help: str = ""


class Writers(Generic[T]):
    """A command's writers, in ``--format`` order (the first is the default)."""

    def __init__(self, what: str, *writers: Writer[T]) -> None:
        self.what = what
        self._by_name = {w.name: w for w in writers}
        if len(self._by_name) != len(writers):
            raise ValueError(f"{what}: two writers share a name")

    def __iter__(self) -> Iterator[Writer[T]]:
        return iter(self._by_name.values())

    def names(self) -> list[str]:
        return list(self._by_name)

    def __getitem__(self, name: str) -> Writer[T]:
        """The writer of ``name``.

        Raises:
            InputError: no writer has that name.
        """
        if name not in self._by_name:
            raise InputError(f"{self.what} has no format {name!r}", f"use one of {', '.join(self._by_name)}")
        return self._by_name[name]

    def help(self) -> str:
        """'name: help; name: help' for the option's help text."""
        return "; ".join(f"{w.name}: {w.help}" for w in self if w.help)

    def files(self, result: T) -> dict[str, str]:
        """file name -> text of every writer that names a file."""
        return {w.file_name: w.write(result) for w in self if w.file_name}
