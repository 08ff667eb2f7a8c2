"""``--scheduler ADDRESS`` that is not a Dask scheduler: one line, exit 2, within seconds, for
`bench` and `sweep` alike (live/scheduler.py). Every server here listens on 127.0.0.1 only, on a
free port, and is stopped at the end of its test."""

from __future__ import annotations

import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts the CLI in a subprocess (and some a server)

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a refused or malformed address may take, interpreter start included.
FAST_S = 15.0


def _cli(tmp_path: Path, command: str, address: str) -> tuple[subprocess.CompletedProcess, float]:
    args = (["bench", "--quick", "--out", str(tmp_path / "b.json")] if command == "bench" else
            ["sweep", "--case", "reduction", "--out", str(tmp_path / "s"), "--no-report"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "profiler_report", *args, "--scheduler", address],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    return res, time.monotonic() - t0


def _one_line_exit_2(res: subprocess.CompletedProcess) -> str:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    return lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("address", ["nonsense", "", "tcp://[::1", "tcp://127.0.0.1", "tcp://127.0.0.1:99999",
                                     "ucx://127.0.0.1:1"])
def test_a_malformed_address_is_bad_input(tmp_path: Path, address: str) -> None:
    res, took = _cli(tmp_path, "bench", address)
    assert "is not a Dask scheduler address" in _one_line_exit_2(res)
    assert took < FAST_S


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_a_refused_port_fails_at_once(tmp_path: Path, command: str) -> None:
    res, took = _cli(tmp_path, command, f"tcp://127.0.0.1:{_free_port()}")
    assert "no Dask scheduler answers" in _one_line_exit_2(res)
    assert took < FAST_S


class _Junk(socketserver.BaseRequestHandler):
    """Answers every connection with 64 bytes of 0xff: a frame count and lengths of ~2**64."""

    def handle(self) -> None:
        self.request.sendall(b"\xff" * 64)
        time.sleep(0.5)


class _Silent(socketserver.BaseRequestHandler):
    """Reads and never answers, as an HTTP server does with Dask's binary handshake."""

    def handle(self) -> None:
        self.request.settimeout(20)
        try:
            while self.request.recv(4096):
                pass
        except OSError:
            pass


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), request.param)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("server", [_Junk, _Silent], indirect=True, ids=["junk", "silent"])
@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_a_server_that_is_not_dask_is_refused_within_the_handshake_bound(tmp_path: Path, server: str,
                                                                         command: str) -> None:
    res, took = _cli(tmp_path, command, server)
    assert "not" in _one_line_exit_2(res) and "Dask scheduler" in res.stderr
    assert took < FAST_S + 10


def test_an_http_server_is_not_a_scheduler(tmp_path: Path) -> None:
    port = _free_port()
    http = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        res, took = _cli(tmp_path, "bench", f"tcp://127.0.0.1:{port}")
    finally:
        http.kill()
        http.wait(10)
    assert "does not answer as a Dask scheduler" in _one_line_exit_2(res)
    assert took < FAST_S + 10
