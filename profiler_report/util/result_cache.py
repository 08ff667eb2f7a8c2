"""A folder of results keyed by everything they depend on: the store under ``profiler-report run``'s
reuse of captures, validations, sanitizer verdicts, peers' timings and experiments.

Layout: ``<root>/<kind>/<digest>/`` holds ``meta.json`` (the key in full, when and by which commit
the result was made, each file's size and SHA-256) and the result's files. An entry is written in
a temporary folder beside it and renamed into place, so a reader never sees half an entry. Every
read checks the key and the files' hashes: an entry that is stale (another key under the same
digest), corrupt (unreadable meta.json, a missing or changed file) or half-written is a miss with
a note, and is removed; never an error, never a wrong number. The folder is bounded
(:data:`DEFAULT_MAX_BYTES`, ``$PROFILER_REPORT_CACHE_MB``): after each write the entries used
longest ago are removed first (least recently used; a hit refreshes the entry's ``meta.json``
mtime).

Where it lives: ``$PROFILER_REPORT_CACHE``, else ``$XDG_CACHE_HOME/profiler-report``, else
``~/.cache/profiler-report`` (the XDG base directory convention).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_report.util.fsio import atomic_write

#: Bound of the cache folder's size when ``$PROFILER_REPORT_CACHE_MB`` is not set (4 GiB: a few
#: hundred full-set captures of a ladder).
DEFAULT_MAX_BYTES = 4 * 2**30
META = "meta.json"
SCHEMA = "profiler-report.cache/1"


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """The cache folder: ``$PROFILER_REPORT_CACHE``, ``$XDG_CACHE_HOME/profiler-report``, or
    ``~/.cache/profiler-report``."""
    env = os.environ if env is None else env
    if env.get("PROFILER_REPORT_CACHE"):
        return Path(env["PROFILER_REPORT_CACHE"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base).expanduser() / "profiler-report"


def max_bytes(env: Mapping[str, str] | None = None) -> int:
    """The folder's bound in bytes: ``$PROFILER_REPORT_CACHE_MB`` (MiB) or :data:`DEFAULT_MAX_BYTES`;
    a value that is not a positive number is ignored."""
    raw = (os.environ if env is None else env).get("PROFILER_REPORT_CACHE_MB", "")
    try:
        mb = float(raw)
    except ValueError:
        return DEFAULT_MAX_BYTES
    return int(mb * 2**20) if mb > 0 else DEFAULT_MAX_BYTES


def digest(key: Any) -> str:
    """SHA-256 (hex, 32 characters) of ``key`` as canonical JSON (sorted keys)."""
    text = json.dumps(key, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def files_hash(paths: list[Path]) -> str:
    """One hash (hex, 32 characters) of several files' names and contents, in name order (a
    missing file hashes as absent): what a key holds for the code or sources a result comes from."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode() + b"\0")
        h.update(p.read_bytes() if p.is_file() else b"<absent>")
    return h.hexdigest()[:32]


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Entry:
    """One stored result: ``kind`` ("profile", "sanitizer", ...), its ``key``, the folder holding
    its files, ``info`` (the result's own small data) and when/by which commit it was made."""

    kind: str
    key: dict[str, Any]
    folder: Path
    info: dict[str, Any]
    date_utc: str
    commit: str
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return self.folder.name

    def path(self, name: str) -> Path:
        return self.folder / name

    @property
    def nbytes(self) -> int:
        return sum(int(f.get("bytes", 0)) for f in self.files.values())


class ResultCache:
    """The store (see the module docstring). ``read`` False (``run --fresh``): every lookup is a
    miss, results are still written (the next run reuses them). ``notes`` collects one line per
    entry found stale or corrupt."""

    def __init__(self, root: Path | None = None, limit: int | None = None, read: bool = True) -> None:
        self.root = cache_root() if root is None else Path(root)
        self.limit = max_bytes() if limit is None else limit
        self.read = read
        self.notes: list[str] = []

    def _folder(self, kind: str, key: dict[str, Any]) -> Path:
        return self.root / kind / digest({"kind": kind, **key})

    def get(self, kind: str, key: dict[str, Any]) -> Entry | None:
        """The entry stored under ``key``, checked; None for a miss (a stale or corrupt entry is
        removed and noted in :attr:`notes`)."""
        if not self.read:
            return None
        folder = self._folder(kind, key)
        if not folder.exists():
            return None
        entry, why = _load(folder, kind)
        if entry is not None and entry.key != json.loads(json.dumps(key, default=str)):
            entry, why = None, "stale: its key differs from the one asked for"
        if entry is None:
            self.notes.append(f"cache entry {kind}/{folder.name} ignored and removed ({why}): recomputed")
            shutil.rmtree(folder, ignore_errors=True)
            return None
        try:
            os.utime(folder / META)  # least recently used: a hit is a use
        except OSError:  # removed meanwhile by another run's eviction: the files were checked above
            pass
        return entry

    def put(self, kind: str, key: dict[str, Any], info: dict[str, Any], files: Mapping[str, Path | bytes] | None = None,
            commit: str = "unknown") -> Entry:
        """Store ``info`` and copies of ``files`` (name -> path or bytes) under ``key``, replacing
        any entry there; then evict the least recently used entries beyond the bound.

        Raises:
            OSError: the cache folder cannot be written (callers treat the cache as optional).
        """
        folder = self._folder(kind, key)
        tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
        tmp.mkdir(parents=True)
        try:
            described = {}
            for name, src in (files or {}).items():
                dest = tmp / name
                if isinstance(src, bytes):
                    dest.write_bytes(src)
                else:
                    shutil.copyfile(src, dest)
                described[name] = {"bytes": dest.stat().st_size, "sha256": file_sha256(dest)}
            meta = {"schema": SCHEMA, "kind": kind, "key": key, "info": info, "files": described, "commit": commit,
                    "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
            atomic_write(tmp / META, json.dumps(meta, indent=1, sort_keys=True, default=str))
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        entry, why = _load(folder, kind)
        if entry is None:  # another run replaced it meanwhile
            raise OSError(f"cache entry {folder} unreadable right after writing it ({why})")
        self.evict(keep=folder)
        return entry

    def entries(self, kind: str | None = None) -> list[Entry]:
        """Every readable entry (of ``kind``), most recently used first; unreadable ones are skipped."""
        found = []
        kinds = [self.root / kind] if kind else sorted(p for p in self.root.glob("*") if p.is_dir())
        for k in kinds:
            for folder in k.glob("*"):
                if folder.name.startswith("."):
                    continue
                entry, _ = _load(folder, k.name, check_files=False)
                if entry is not None:
                    found.append(entry)
        return sorted(found, key=lambda e: -_used(e.folder))

    def size(self) -> int:
        """Bytes under the cache folder (every file, half-written ones too)."""
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file()) if self.root.exists() else 0

    def evict(self, keep: Path | None = None) -> list[Path]:
        """Remove entries used longest ago until the folder is within :attr:`limit` (never
        ``keep``, the entry just written); also leftover temporary folders older than an hour.
        Returns the removed folders."""
        removed = []
        for tmp in self.root.glob("*/.*.tmp"):
            if time.time() - tmp.stat().st_mtime > 3600:
                shutil.rmtree(tmp, ignore_errors=True)
        by_age = sorted((_used(f), f) for f in self.root.glob("*/*") if f.is_dir() and not f.name.startswith("."))
        total = self.size()
        for _, folder in by_age:
            if total <= self.limit:
                break
            if folder == keep:
                continue
            nbytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
            shutil.rmtree(folder, ignore_errors=True)
            total -= nbytes
            removed.append(folder)
        return removed

    def clear(self, kind: str | None = None) -> int:
        """Remove every entry (of ``kind``); returns how many were removed."""
        folders = [f for f in (self.root.glob(f"{kind}/*") if kind else self.root.glob("*/*")) if f.is_dir()]
        for f in folders:
            shutil.rmtree(f, ignore_errors=True)
        return len(folders)


def _used(folder: Path) -> float:
    try:
        return (folder / META).stat().st_mtime
    except OSError:
        return 0.0


def _load(folder: Path, kind: str, check_files: bool = True) -> tuple[Entry | None, str]:
    """(the entry in ``folder``, "") or (None, why it cannot be used)."""
    try:
        meta = json.loads((folder / META).read_text())
    except (OSError, ValueError) as exc:
        return None, f"unreadable {META}: {type(exc).__name__}"
    if not isinstance(meta, dict) or meta.get("schema") != SCHEMA or meta.get("kind") != kind \
            or not isinstance(meta.get("key"), dict) or not isinstance(meta.get("files", {}), dict):
        return None, f"{META} is not a {SCHEMA} entry of kind {kind}"
    files = meta.get("files", {})
    for name, desc in files.items() if check_files else ():
        path = folder / name
        if not path.is_file():
            return None, f"its file {name} is missing"
        if path.stat().st_size != desc.get("bytes") or file_sha256(path) != desc.get("sha256"):
            return None, f"its file {name} does not match its recorded SHA-256"
    return Entry(kind, meta["key"], folder, dict(meta.get("info") or {}), str(meta.get("date_utc", "")),
                 str(meta.get("commit", "")), files), ""
