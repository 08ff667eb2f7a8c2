"""TODO docstring."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from profiler_report.capture.reader_child import PARTS, merge_parts
from profiler_report.errors import ReportUnreadableError

#: First bytes of every ``.ncu-rep``; a little-endian uint16 format version follows.
NCU_REP_MAGIC = b"NVR\x00"


#: Seconds a read may take before its children are killed.
READ_TIMEOUT_S = 600.0


def ncu_rep_format(path: Path) -> int | None:
    """The report format version in a ``.ncu-rep`` header; None when the file is not one.

    Raises:
        OSError: the file cannot be opened.
    """
    with path.open("rb") as fh:
        head = fh.read(8)
    if len(head) < 6 or not head.startswith(NCU_REP_MAGIC):
        return None
    return int.from_bytes(head[4:6], "little")


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
    ``split`` (default: :func:`split_pays`), else one reading everything.

    :meth:`raw` waits for them; :meth:`close` kills any still running (call it when the data
    will not be collected, e.g. after an error).
    """

    def __init__(self, path: Path, timeout_s: float = READ_TIMEOUT_S, split: bool | None = None) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self._deadline = time.monotonic() + timeout_s
        if split is None:
            split = split_pays()
        self._procs = [_spawn(self.path, part) for part in (PARTS if split else (None,))]
        self._data: dict[str, Any] | None = None

    def raw(self) -> dict[str, Any]:
        """The :func:`~profiler_report.capture.reader_child.read_raw` data of the whole report (waits).

        Raises:
            ReportUnreadableError: a child ran past ``timeout_s`` seconds (counted from the
                start), crashed, exited non-zero or printed no pickle.
        """
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
            raise ReportUnreadableError(f"reading {self.path} took longer than {self.timeout_s:.0f} s") from exc
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


def _spawn(path: Path, part: str | None) -> subprocess.Popen[bytes]:
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "profiler_report.capture.reader_child", str(path),
                             *(["--part", part] if part else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def start_read(path: Path, timeout_s: float = READ_TIMEOUT_S) -> PendingRead | None:
    """Start reading ``path`` when it is a ``.ncu-rep``; None otherwise (a CSV export, a missing,
    empty or unreadable file: :func:`profiler_report.extract.read_capture` reports those)."""
    try:
        if not path.is_file() or ncu_rep_format(path) is None:
            return None
    except OSError:
        return None
    return PendingRead(path, timeout_s)
