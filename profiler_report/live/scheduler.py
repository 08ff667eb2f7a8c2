"""Is ``--scheduler ADDRESS`` a Dask scheduler? Checked before a ``distributed.Client`` is made.

A Client given a port where something else listens can wait forever in its handshake (an HTTP
server reads Dask's binary frames as a request line and never answers), read junk as a frame
length (``MemoryError: Unable to allocate 3.07 EiB``), or retry a refused port until its timeout.
So the address is parsed with distributed's own parser, a plain TCP connect fails a refused or
unreachable port at once, and a bounded ``identity`` call (the one every Dask server answers)
must return a scheduler's identity, all within :data:`HANDSHAKE_S` seconds.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from profiler_report.errors import InputError

#: Seconds the whole check (TCP connect, Dask handshake, identity reply) may take.
HANDSHAKE_S = 5.0
_HINT = ("start one (dask scheduler; dask cuda worker ADDRESS on each GPU host) or fix the address "
         "(tcp://HOST:PORT, as `dask scheduler` prints it)")


def parse_scheduler(address: str) -> tuple[str, str, int]:
    """(address, host, port) of a ``tcp://`` or ``tls://`` scheduler address; a bare ``HOST:PORT``
    is taken as ``tcp://HOST:PORT``, as ``distributed.Client`` takes it.

    Raises:
        InputError: no scheme Dask knows, no host, no port, a port outside 1..65535.
    """
    from distributed.comm.addressing import get_address_host_port, parse_address

    addr = address.strip()
    if addr and "://" not in addr:
        addr = f"tcp://{addr}"
    try:
        scheme, _ = parse_address(addr, strict=True)
        host, port = get_address_host_port(addr)
    except ValueError as exc:
        raise InputError(f"--scheduler {address!r} is not a Dask scheduler address ({exc})", _HINT) from exc
    if scheme not in ("tcp", "tls") or not host or not 0 < port < 65536:
        raise InputError(f"--scheduler {address!r} is not a Dask scheduler address (want tcp://HOST:PORT)", _HINT)
    return addr, host, port


def check_scheduler(address: str, timeout_s: float = HANDSHAKE_S) -> str:
    """The normalized ``address`` once a Dask scheduler answered there within ``timeout_s``.

    Raises:
        InputError: a malformed address, a refused or unreachable port, or a server that does not
            answer Dask's ``identity`` as a scheduler (another program, a Dask worker).
    """
    addr, host, port = parse_scheduler(address)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        raise InputError(f"no Dask scheduler answers at {address} ({exc.strerror or exc})", _HINT) from exc
    if addr.startswith("tls://"):
        return addr  # the identity call needs the cluster's TLS settings: the Client's own timeout bounds it
    try:
        who = asyncio.run(asyncio.wait_for(_identity(addr, timeout_s), timeout_s))
    except TimeoutError as exc:
        raise InputError(f"{address} accepts connections but does not answer as a Dask scheduler within "
                         f"{timeout_s:g} s", _HINT) from exc
    except Exception as exc:  # junk frames (MemoryError on a huge length), a closed stream, bad msgpack
        raise InputError(f"{address} is not a Dask scheduler ({type(exc).__name__}: {str(exc)[:120]})", _HINT) from exc
    if not isinstance(who, dict) or who.get("type") != "Scheduler":
        kind = who.get("type") if isinstance(who, dict) else type(who).__name__
        raise InputError(f"{address} answers as {kind!s:.40}, not as a Dask scheduler", _HINT)
    return addr


async def _identity(addr: str, timeout_s: float) -> Any:
    from distributed.comm import connect

    comm = await connect(addr, timeout=timeout_s)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()
