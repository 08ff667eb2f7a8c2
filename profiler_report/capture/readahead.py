"""Reading a ``.ncu-rep`` in child processes, started early (while the parent imports pandas and
matplotlib) and bounded in time by the capture's size."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from profiler_report.capture.reader_child import PARTS, RANGES, merge_parts
from profiler_report.errors import ReportUnreadableError

#: First bytes of every ``.ncu-rep``; a little-endian uint16 format version follows.
NCU_REP_MAGIC = b"NVR\x00"

#: First bytes of a zstd frame: an ``.ncu-repz``, ncu's compressed report (``zstd`` of an
#: ``.ncu-rep``), which ncu_report and the Nsight Compute UI open as it is. Captures of library
#: kernels embed their whole module's cubin per launch (PyTorch's: 7-10 MB each) and compress ~25x.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

#: :func:`ncu_rep_format` of an ``.ncu-repz``: its version is inside the compressed stream.
COMPRESSED = 0


#: A read may take READ_BASE_S plus READ_S_PER_MB per MB of capture before its children are
#: killed: ncu_report reads the 9.8 MB H200 fixture in 1.5-3 s on 2 CPUs (about 5 MB/s), so the
#: bound is 10x that plus room for a slow disk and a busy machine.
READ_BASE_S = 30.0
READ_S_PER_MB = 2.0


def read_timeout_s(path: Path) -> float:
    """Seconds the read of ``path`` may take: READ_BASE_S + READ_S_PER_MB per MB (0 for a file
    that cannot be stat'ed: the read itself reports it)."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return READ_BASE_S + READ_S_PER_MB * size / 1e6


def ncu_rep_format(path: Path) -> int | None:
    """The report format version in a ``.ncu-rep`` header; :data:`COMPRESSED` for an
    ``.ncu-repz``; None when the file is neither.

    Raises:
        OSError: the file cannot be opened.
    """
    with path.open("rb") as fh:
        head = fh.read(8)
    if head.startswith(ZSTD_MAGIC):
        return COMPRESSED
    if len(head) < 6 or not head.startswith(NCU_REP_MAGIC):
        return None
    return int.from_bytes(head[4:6], "little")


#: Blocks :func:`corrupt_tail` walks at most (real captures hold tens; each step is one 4-byte read).
MAX_BLOCKS = 100_000


def corrupt_tail(path: Path) -> str:
    """Why the ``.ncu-rep`` at ``path`` cannot be whole, found without ncu_report; "" when its
    layout looks whole (or cannot be judged here).

    After the 8-byte header (magic, uint32 length of the file header) and the file header, a
    report is a run of blocks, each a little-endian uint32 length and that many bytes, to the end
    of the file (every capture of tests/data walks to its last byte; the smallest block is 47
    bytes). A block of length 0 is no block: a file of a header and hundreds of MB of zeros would
    keep ncu_report busy for minutes, so it is refused at once. A block running past the end (a
    cut file) is left to ncu_report, which says "truncated"."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(8)
            if len(head) < 8 or not head.startswith(NCU_REP_MAGIC):
                return ""
            off = 8 + int.from_bytes(head[4:8], "little")
            for _ in range(MAX_BLOCKS):
                if off + 4 > size:
                    return ""
                fh.seek(off)
                length = int.from_bytes(fh.read(4), "little")
                if length == 0:
                    return (f"{path} is corrupt: its blocks end at byte {off:,} of {size:,}, and the "
                            f"{size - off:,} bytes after them hold no block (a block length of 0)")
                off += 4 + length
    except OSError:
        return ""
    return ""


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity mask where the OS has one, else the CPU count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def split_pays() -> bool:
    """Whether one child per part beats one child reading all: with a CPU for each child and one
    for this process. Each child pays the interpreter start and load_report (~0.2 s of CPU), so
    on 2 CPUs, busy with this process's imports too, one child finishes sooner (measured)."""
    return usable_cpus() > len(PARTS)


class PendingRead:
    """The children reading one ``.ncu-rep``, started on creation: one per ncu_reader part when
    ``split`` (default: :func:`split_pays`), else one reading everything; or one per entry of
    ``parts`` when given (``("ranges",)``: only the NVTX ranges). ``nice``: the children run that
    much below this process's CPU priority (a read wanted after another, which it would otherwise
    slow down on a machine with few CPUs).

    :meth:`raw` waits for them; :meth:`close` kills any still running (call it when the data
    will not be collected, e.g. after an error).
    """

    def __init__(self, path: Path, timeout_s: float | None = None, split: bool | None = None,
                 parts: tuple[str, ...] | None = None, nice: int = 0) -> None:
        self.path = Path(path)
        self.timeout_s = read_timeout_s(self.path) if timeout_s is None else timeout_s
        self._deadline = time.monotonic() + self.timeout_s
        if split is None:
            split = split_pays()
        # None: one child reads the whole report (the split does not pay on this machine).
        chosen: tuple[str | None, ...] = parts if parts is not None else PARTS if split else (None,)
        self._corrupt = corrupt_tail(self.path)
        self._procs = [] if self._corrupt else [_spawn(self.path, part, nice) for part in chosen]
        self._data: dict[str, Any] | None = None

    def raw(self) -> dict[str, Any]:
        """The :func:`~profiler_report.capture.reader_child.read_raw` data of the whole report (waits).

        Raises:
            ReportUnreadableError: the file's layout is corrupt (:func:`corrupt_tail`), or a child
                ran past ``timeout_s`` seconds (counted from the start), crashed, exited non-zero or
                printed no pickle.
        """
        if self._corrupt:
            raise ReportUnreadableError(self._corrupt, "copy or export the capture again: a .ncu-rep is whole "
                                        "length-prefixed blocks to its last byte")
        if self._data is None:
            try:
                self._data = merge_parts([self._collect(proc) for proc in self._procs])
            finally:
                self.close()
        return self._data

    def close(self) -> None:
        """Kill the children still running and release their pipes (:meth:`raw` can then no
        longer collect them); safe to call twice."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self._procs:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            proc.wait()

    def _collect(self, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
        try:
            out, err = proc.communicate(timeout=max(0.0, self._deadline - time.monotonic()))
        except subprocess.TimeoutExpired as exc:
            size = self.path.stat().st_size / 1e6 if self.path.exists() else 0.0
            raise ReportUnreadableError(
                f"reading {self.path} timed out: the ncu_report reader ran past {self.timeout_s:.0f} s, the limit for "
                f"a {size:.1f} MB capture, and was stopped",
                "check the file is a complete .ncu-rep on a local disk; if ncu_report hangs on it, re-export the "
                "capture with the ncu that wrote it") from exc
        if proc.returncode != 0:
            why = "crashed" if proc.returncode < 0 else f"exited with status {proc.returncode}"
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise ReportUnreadableError(f"ncu_report {why} reading {self.path} {tail[0][:200]}".strip(),
                                        "check the file; try another ncu-report version (`pip install -U ncu-report`)")
        try:
            return pickle.loads(out)
        except Exception as exc:  # a child that printed something else
            raise ReportUnreadableError(
                f"ncu_report gave no readable data for {self.path} ({type(exc).__name__})") from exc


def child_argv(path: Path, part: str | None) -> list[str]:
    """The reader child's command line (tests replace it with a child that hangs)."""
    return [sys.executable, "-m", "profiler_report.capture.reader_child", str(path),
            *(["--part", part] if part else [])]


def _spawn(path: Path, part: str | None, nice: int = 0) -> subprocess.Popen[bytes]:
    root = str(Path(__file__).resolve().parent.parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = [*child_argv(path, part), *(["--nice", str(nice)] if nice else [])]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def launch_ranges(path: Path, timeout_s: float | None = None) -> list[str]:
    """The NVTX push/pop ranges of every launch of the ``.ncu-rep`` at ``path``, in capture order
    ("/"-joined, outermost first; "" for a launch outside every range).

    Raises:
        ReportUnreadableError: the report cannot be read, or ncu_report is not installed.
    """
    data = PendingRead(path, timeout_s, parts=(RANGES,)).raw()
    if data.get("error") == "no-module":
        raise ReportUnreadableError("the ncu_report module is not installed", "pip install ncu-report")
    if data.get("error"):
        raise ReportUnreadableError(f"{path} is not a readable Nsight Compute report ({data['error']})")
    return list(data["ranges"])


def start_read(path: Path, timeout_s: float | None = None, nice: int = 0) -> PendingRead | None:
    """Start reading ``path`` when it is a ``.ncu-rep`` (``nice``: see :class:`PendingRead`);
    None otherwise (a CSV export, a missing, empty or unreadable file:
    :func:`profiler_report.extract.read_capture` reports those)."""
    from profiler_report.capture import parsed

    try:
        if not path.is_file() or ncu_rep_format(path) is None or parsed.has(path):
            return None  # (a capture read before comes from the result cache: no child to start)
    except OSError:
        return None
    return PendingRead(path, timeout_s, nice=nice)
