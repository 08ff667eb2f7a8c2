"""Writes that leave nothing half-written: a temporary name beside the file, then a rename; a
report folder built as ``<dest>.partial`` and renamed into place when complete."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from profiler_report.errors import InputError
from profiler_report.util.timer import log


def write_json(path: Path, data: Any) -> None:
    """Write JSON to a temporary name, then rename it into place."""
    atomic_write(path, json.dumps(data, indent=2, default=str) + "\n")


@contextmanager
def atomic_dir(dest: Path, keep_partial: bool = True) -> Iterator[Path]:
    """Yield ``<dest>.partial``; on success replace ``dest`` with it, on failure keep or drop it.

    Raises:
        InputError: ``dest`` is a file (checked before anything is written; it is never moved).
    """
    require_folder_path(dest)
    partial = dest.with_name(dest.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    try:
        yield partial
    except BaseException:
        if keep_partial:
            log(f"partial output kept in {partial} (the previous report in {dest} is untouched)")
        else:
            shutil.rmtree(partial, ignore_errors=True)
        raise
    old = dest.with_name(dest.name + ".old")
    if dest.exists():
        if old.exists():
            shutil.rmtree(old)
        os.replace(dest, old)
    os.replace(partial, dest)
    if old.exists():
        shutil.rmtree(old)


Data = str | bytes


def _target(path: Path, follow_links: bool) -> Path:
    """Where to write: a symlink's target when following links (renaming over the link would
    replace the link), else the path itself (the rename replaces the link, never its target)."""
    return Path(os.path.realpath(path)) if follow_links and path.is_symlink() else path


def _is_special(path: Path, follow_links: bool = True) -> bool:
    """An existing path that is not a regular file: a device or a FIFO (/dev/stdout, /dev/null).
    Without ``follow_links`` a symlink is itself the path (never special)."""
    try:
        mode = (os.stat if follow_links else os.lstat)(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode) and not stat.S_ISLNK(mode)


def _bytes(data: Data) -> bytes:
    return data.encode() if isinstance(data, str) else data


def atomic_write(path: str | Path, data: Data) -> None:
    """Write ``data`` to ``.<name>.tmp`` beside ``path``, then rename it over ``path``.

    A symlink is followed (its target is replaced, the link kept: the caller named this file);
    a device or FIFO is written directly, since a rename would replace the device node itself.

    Raises:
        OSError: the folder cannot be written (the CLI reports it on one line, exit 2).
    """
    atomic_write_many({Path(path): data})


def require_folder_path(folder: Path) -> None:
    """``folder`` can be an output folder: absent, or a folder.

    Raises:
        InputError: ``folder`` is a symlink to a folder that does not exist (``mkdir`` would say
            only "File exists"), or a file.
    """
    if folder.is_symlink() and not folder.exists():
        raise InputError(f"output folder {folder} is a symlink to {os.readlink(folder)}, which does not exist",
                         "create that folder, or choose another output folder (--out)")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"output folder {folder} is a file, not a folder", "choose another output folder (--out)")


def ensure_dir(folder: Path) -> None:
    """Create the output folder ``folder`` (and its parents) unless it exists.

    Raises:
        InputError: as :func:`require_folder_path`.
    """
    require_folder_path(folder)
    folder.mkdir(parents=True, exist_ok=True)


def atomic_write_many(files: Mapping[Path, Data], follow_links: bool = True) -> None:
    """Write several files as close to all-or-nothing as renames allow: every temporary file is
    written first, then all are renamed in quick succession; on a failure before the renames the
    temporary files are removed and every destination is left as it was.

    ``follow_links`` False (files written into a folder, such as ``render --out DIR``): a
    symlink among ``files`` is replaced by the new file; what it pointed to, possibly outside the
    folder, is never written.

    Raises:
        OSError: a folder cannot be written.
    """
    for path in files:
        if Path(path).is_dir() and not (not follow_links and Path(path).is_symlink()):
            raise IsADirectoryError(21, "Is a directory", str(path))  # os.replace would fail half-way
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items():
            dest = _target(Path(path), follow_links)
            if _is_special(dest, follow_links):
                with open(dest, "wb") as fh:  # a device or FIFO: nothing to replace
                    fh.write(_bytes(data))
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.tmp")
            staged.append((tmp, dest))
            tmp.write_bytes(_bytes(data))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, dest in staged:
        os.replace(tmp, dest)
