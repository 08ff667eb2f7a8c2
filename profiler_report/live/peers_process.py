"""The peers' timing in a process of its own, started as the run starts.

Why: importing the peer libraries is most of a cold peers step. ``import torch._inductor.compile_fx``
alone took 8.8 s on the H100's host, PyTorch 2.9 s, JAX 0.9 s (``lab/cold_parts.py``). The
process (``python -m profiler_report.live.target peers``) imports them while the run's first
phases use the GPU, then waits: it touches the GPU only once the run sends it the peers' step (one
JSON line on its stdin), while the run itself waits for its answer. So the peers are timed alone
on the GPU, as in the run's own process, and the imports cost no wall time.

While the run's GPU work needs no exclusive GPU (compute-sanitizer checks correctness, not
speed), the run may ask it to warm up (:meth:`PeersProcess.warm`): build each peer and run it once
(TorchInductor's and Triton's compiles, the libraries' start on the GPU), untimed; the run waits
for it to say so (:meth:`PeersProcess.warmed`) before it times anything again. It asks only when
the imports are already over (:meth:`PeersProcess.ready`): otherwise the wait would outlast the
sanitizer, and the peers' step (after ncu's, when the imports are long over) builds them itself.

The answer is bench.json's content after :data:`~profiler_report.model.experiment.RESULT_PREFIX`
on its stdout. A process that fails or gives no answer is reported on one line and the step runs
in the run's own process instead (the same :meth:`~profiler_report.model.base.Case.bench_at`).
"""

from __future__ import annotations

import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from contextlib import suppress
from dataclasses import replace
from typing import Any

from profiler_report.model.base import Case, Size
from profiler_report.model.experiment import RESULT_PREFIX
from profiler_report.model.manifest import Stage

#: The libraries the peers of the built-in cases build on, imported before the step is asked for
#: (a missing one is skipped here; its peers' rows say "skipped" as they would in the run's process).
PEER_IMPORTS = ("torch", "torch._dynamo", "torch._inductor.compile_fx", "triton", "jax", "jax.numpy")
#: The line the process prints when its imports are over (it then waits for a request).
READY = "profiler-report-peers-ready"
#: The line the process prints when its warm-up is over.
WARMED = "profiler-report-peers-warmed"
#: The line, with its seconds, the process prints when it has timed the peers.
TIMED = "profiler-report-peers-timed"


class PeersProcess:
    """The peers' process of one run: started by :meth:`start`, asked once by :meth:`bench`,
    stopped by :meth:`close` (also when the run fails or is interrupted)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self._early = b""  # what it printed before READY, read by ready()
        #: What it said of its own seconds: "imports" (READY's) and "timings" (TIMED's), once answered.
        self.seconds: dict[str, float] = {}

    @classmethod
    def start(cls, case: Case, size: Size, dtype: str) -> PeersProcess:
        """Start the process for ``case`` at ``size`` and ``dtype``; it imports :data:`PEER_IMPORTS`."""
        argv = [sys.executable, "-m", "profiler_report.live.target", "peers", "--case", case.ref,
                "--size", json.dumps(dict(size), sort_keys=True), "--dtype", dtype]
        # A session of its own: Ctrl-C reaches the run, which stops it (close), not both at once.
        return cls(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", start_new_session=True))

    def ready(self) -> bool:
        """Whether its imports are over (it printed :data:`READY`), without waiting: the warm-up
        asked now starts at once, beside the sanitizer, instead of some time after it. Reads only
        what the process printed up to that line (it prints nothing more until it is asked)."""
        if READY.encode() in self._early:
            return True
        if self.proc.stdout is None:
            return False
        fd = self.proc.stdout.fileno()
        try:
            while select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:  # it ended
                    break
                self._early += chunk
        except (OSError, ValueError):  # closed
            return False
        return READY.encode() in self._early

    def warm(self) -> None:
        """Ask for the warm-up (see the module docstring): the GPU is shared from now until
        :meth:`warmed` returns."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.write(json.dumps({"warm": True}) + "\n")
                self.proc.stdin.flush()
            except OSError:  # it ended: warmed() says so
                pass

    def warmed(self, timeout_s: float) -> str:
        """Wait for the end of the warm-up: "" when it ended, else why not (the process ended, or
        ran past ``timeout_s``); the process is then stopped, so that nothing of it runs on the GPU
        once the run times again."""
        seen, late = self._read_until(WARMED, timeout_s)
        if seen and seen[-1].startswith(WARMED):
            return ""
        self.close()
        return f"no warm-up within {timeout_s:.0f} s" if late else f"it ended: {_tail(seen)}"

    def bench(self, stages: list[Stage], repeats: int, provenance: dict[str, Any],
              timeout_s: float) -> tuple[dict[str, Any] | None, str]:
        """(bench.json's content, "") from the process, or (None, why not): it failed, printed
        no answer or ran past ``timeout_s``. Once it has answered, or failed to in time, it is
        stopped: its libraries' teardown at exit (seconds, for TorchInductor's and JAX's) is not
        waited for."""
        request = {"stages": [[s.id, list(s.targs)] for s in stages], "repeats": repeats, "provenance": provenance}
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.close()
        except OSError as exc:  # it ended before reading: a broken pipe
            self.close()
            return None, f"it ended early ({exc.strerror or exc})"
        seen, late = self._read_until(RESULT_PREFIX, timeout_s)
        answered = bool(seen) and seen[-1].startswith(RESULT_PREFIX)
        if answered or late:
            self.close()
        else:  # it ended without an answer: its own exit status says how
            self.proc.wait()
        self.seconds = {**self.seconds, **_seconds(self._early.decode(errors="replace") + "".join(seen))}
        if late:
            return None, f"no answer within {timeout_s:.0f} s"
        if not answered:
            return None, f"exit {self.proc.returncode}: {_tail(seen)}"
        return json.loads(seen[-1][len(RESULT_PREFIX):]), ""

    def _read_until(self, marker: str, timeout_s: float) -> tuple[list[str], bool]:
        """Its output lines up to the first that starts with ``marker`` (or to its end), read for
        at most ``timeout_s``: (the lines, whether the time ran out first)."""
        seen: list[str] = []

        def read() -> None:
            try:
                for line in self.proc.stdout or ():
                    seen.append(line)
                    if line.startswith(marker):
                        return
            except (OSError, ValueError):  # closed under it by close(): the wait is over anyway
                return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout_s)
        return seen, reader.is_alive()

    def close(self) -> None:
        """Stop the process if it still runs (its whole session: TorchInductor's compile workers too)."""
        if self.proc.poll() is None:
            from profiler_report.live.ncu import _kill  # the one way a tool's process group is stopped

            _kill(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def _tail(lines: list[str]) -> str:
    """The last line that says something (or "no output"), cut to 300 characters."""
    return next((ln.strip() for ln in reversed(lines) if ln.strip()), "no output")[:300]


def _seconds(text: str) -> dict[str, float]:
    """The seconds the process printed after :data:`READY` and :data:`TIMED`, by "imports" and
    "timings" (lines without them, or unread, are left out)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        for word, key in ((READY, "imports"), (TIMED, "timings")):
            if line.startswith(word):
                with suppress(ValueError):
                    out[key] = float(line[len(word):])
    return out


def serve(case: Case, size: Size, dtype: str) -> int:
    """The process's side: import the peer libraries, wait for a request line, warm up when it
    asks for that (then print :data:`WARMED` and wait for the next), answer the request for the
    timings. An empty stdin (the run needed no peers after all) ends it with nothing done."""
    t0 = time.monotonic()
    for name in PEER_IMPORTS:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (missing or broken: the peer's own import says why, in its row)
            continue
    print(f"{READY} {time.monotonic() - t0:.1f}", flush=True)  # with the imports' seconds, for the run's log
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    request = json.loads(line)
    if request.get("warm"):
        try:
            case.warm_peers(size, dtype)
        except Exception as exc:  # noqa: BLE001 (the timed step builds them again and says what fails)
            print(f"warm-up stopped: {type(exc).__name__}: {exc}", flush=True)
        print(WARMED, flush=True)
        line = sys.stdin.readline()
        if not line.strip():
            return 0
        request = json.loads(line)
    stages = [replace(case.manifest.stage(sid), targs=tuple(targs)) for sid, targs in request["stages"]]
    t1 = time.monotonic()
    doc = case.bench_at(size, dtype, int(request["repeats"]), stages, request["provenance"])
    print(f"{TIMED} {time.monotonic() - t1:.1f}", flush=True)
    print(RESULT_PREFIX + json.dumps(doc), flush=True)
    return 0
