"""Which ``ncu_report`` module reads ``.ncu-rep`` files: the PyPI package or the copy an Nsight
Compute install bundles (``<ncu folder>/extras/python``), whichever is newer.

A reader opens captures written by its own ncu release and older ones (the committed fixtures,
written by ncu 2025.3.1, read identically under ncu-report 2025.3.1 and 2026.3.1), not newer
ones: a capture from ncu 2027.1 needs a 2027.1 reader. So the newest reader on the machine is
picked, and a local ncu newer than every installed reader brings its own.

Nothing here imports ``ncu_report`` except :func:`load_reader` (it must not share a process with
pandas or CuPy: see :mod:`profiler_report.capture.reader_child`): versions come from the
package's metadata and the bundled copies' folder names.
"""

from __future__ import annotations

import glob
import importlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

#: Where an Nsight Compute install keeps its copy of ncu_report.
BUNDLED_GLOBS = ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python")

#: The PyPI package (``pip install ncu-report``).
PACKAGE = "ncu-report"

_VERSION = re.compile(r"(20\d\d)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")


@dataclass(frozen=True)
class Reader:
    """One ``ncu_report`` module that could read captures.

    ``version`` is its release ("2026.3.1"; "" when unknown), ``origin`` says where it comes from
    ("ncu-report package" or "bundled with ncu in FOLDER"), ``folder`` is what to put on
    ``sys.path`` for a bundled copy (None for the package).
    """

    version: str
    origin: str
    folder: str | None = None

    def describe(self) -> str:
        """'ncu_report 2026.3.1 (ncu-report package)'."""
        return f"ncu_report {self.version or '(version unknown)'} ({self.origin})"


def version_key(text: str) -> tuple[int, ...]:
    """'2026.3.1.0' or 'Version 2026.3.1.0 (build 1)' -> (2026, 3, 1, 0); () when none is found."""
    m = _VERSION.search(text or "")
    return tuple(int(g) for g in m.groups() if g is not None) if m else ()


def opens(reader_version: str, ncu_version: str) -> bool | None:
    """Whether a reader of ``reader_version`` opens captures of ncu ``ncu_version``: the same or
    an older release (year.minor); None when either version is unknown."""
    r, n = version_key(reader_version), version_key(ncu_version)
    if not r or not n:
        return None
    return r[:2] >= n[:2]


def package_version() -> str:
    """The installed ncu-report package's version, "" when it is not installed."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _ncu_folders() -> list[str]:
    """``extras/python`` beside the ncu on PATH or in ``$NCU`` (any install folder)."""
    out = []
    for ncu in (os.environ.get("NCU"), shutil.which("ncu")):
        if ncu and os.path.isfile(ncu):
            out.append(os.path.join(os.path.dirname(os.path.realpath(ncu)), "extras", "python"))
    return out


def bundled(globs: Iterable[str] | None = None, extra: Iterable[str] | None = None) -> list[Reader]:
    """The copies bundled with Nsight Compute installs (folders holding ``ncu_report.py``) in
    ``globs`` (default :data:`BUNDLED_GLOBS`) and ``extra`` (default: beside the ncu on PATH);
    each one's version is the last release number in its path."""
    folders = [*(extra if extra is not None else _ncu_folders()),
               *(d for pattern in (BUNDLED_GLOBS if globs is None else globs) for d in sorted(glob.glob(pattern)))]
    out, seen = [], set()
    for folder in folders:
        real = os.path.realpath(folder)
        if real in seen or not os.path.isfile(os.path.join(folder, "ncu_report.py")):
            continue
        seen.add(real)
        found = list(_VERSION.finditer(real))
        out.append(Reader(found[-1].group(0) if found else "", f"bundled with ncu in {folder}", folder))
    return out


def readers(package: str | None = None, copies: list[Reader] | None = None) -> list[Reader]:
    """Every reader on this machine, the preferred first: newest version first, the package
    before a bundled copy of the same version (and before copies of unknown version).

    ``package`` (the package's version, "" when absent) and ``copies`` default to this machine's.
    """
    version = package_version() if package is None else package
    if not version and package is None and importlib.util.find_spec("ncu_report") is not None:
        version = "?"  # importable, but without metadata (a copy on PYTHONPATH)
    found = [Reader("" if version == "?" else version, f"{PACKAGE} package")] if version else []
    found += bundled() if copies is None else copies
    # Stable sort: among equal versions the package (listed first) stays first.
    return sorted(found, key=lambda r: version_key(r.version), reverse=True)


def chosen() -> Reader | None:
    """The reader :func:`load_reader` tries first, without importing it; None when there is none."""
    found = readers()
    return found[0] if found else None


def load_reader() -> tuple[ModuleType, Reader] | None:
    """Import the preferred ``ncu_report`` that imports here (falling back to the next on an
    import failure, e.g. a bundled copy built for another Python); None when none does."""
    for reader in readers():
        if reader.folder is not None:
            sys.path.insert(0, reader.folder)
        try:
            sys.modules.pop("ncu_report", None)
            return importlib.import_module("ncu_report"), reader
        except ImportError:
            if reader.folder is not None:
                sys.path.remove(reader.folder)
    return None


def load() -> ModuleType | None:
    """The ``ncu_report`` module :func:`load_reader` picks, or None."""
    found = load_reader()
    return found[0] if found else None


def available() -> bool:
    """Whether some ncu_report can be imported here, without importing it."""
    return bool(readers())
