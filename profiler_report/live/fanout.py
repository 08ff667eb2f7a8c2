"""A sweep as a list of points, run in-process or fanned out over the GPUs of a Dask cluster.

A :class:`SweepPoint` is one work unit of a case's benchmark (case, what it runs, size, dtype,
configuration); :func:`run_sweep` runs a list of them and returns one :class:`PointResult` per
point, in the points' order, whatever order they finished in. In-process (the default) imports no
Dask; with a ``distributed.Client`` each point is one task on a worker (one worker per GPU under
dask-cuda's ``LocalCUDACluster``). A point that raises, or whose worker dies, is retried once and
then recorded as failed with its reason; the other points are kept. Each finished point is kept on
disk (:class:`PointStore`, keyed by the point and the commit), so an interrupted sweep resumes.

Dask (``pip install "profiler-report[cluster]"``) is imported only inside the functions that need it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from profiler_report.analysis.placement import mixed_gpus
from profiler_report.errors import InputError, ProfilerReportError
from profiler_report.util.fsio import write_json
from profiler_report.util.jsonable import check_record

#: Extra row fields saying where a point ran (host, GPU index, UUID, model, driver); the only
#: fields of a row that may differ between an in-process sweep and the same sweep through Dask.
WHERE_FIELDS = ("host", "gpu_index", "gpu_uuid", "gpu_name", "gpu_driver")

#: Retries of a failed point (an exception, or its worker lost) before it is recorded as failed.
RETRIES = 1


@dataclass(frozen=True)
class SweepPoint:
    """One work unit of a sweep.

    ``case``: the case reference ``get_case`` takes (a name or a case folder); ``unit``: which of the
    case's bench functions runs (the transpose: "size" or "shapes"; the reduction: "size" or
    "configs"); ``size``: the case's dimensions as (name, value) pairs; ``stages``: "" for every
    stage of the manifest, else the stage launch kind kept (an attempt such as "vec"); ``options``:
    extra NVRTC options; ``suffix``: appended to the stage names of an attempt; ``peers``: whether
    the peer libraries are timed too; ``repeats``: event-timed launches per entry.
    """

    case: str
    unit: str
    size: tuple[tuple[str, int], ...]
    dtype: str
    stages: str = ""
    options: tuple[str, ...] = ()
    suffix: str = ""
    peers: bool = True
    repeats: int = 30

    @property
    def dims(self) -> dict[str, int]:
        return dict(self.size)

    def key(self) -> str:
        """16 hex digits of sha256 over the point's fields: its name in the point store."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def label(self) -> str:
        """'reduction configs n=268435456 float32 [-maxrregcount=32]' (for progress and errors)."""
        size = " ".join(f"{k}={v}" for k, v in self.size)
        extra = " ".join(x for x in (self.stages and f"stages={self.stages}", *self.options) if x)
        return f"{self.case} {self.unit} {size} {self.dtype}" + (f" [{extra}]" if extra else "")


@dataclass
class PointResult:
    """What one point gave: its rows (dicts of the case's bench rows, with WHERE_FIELDS), where it
    ran (host, GPU index and UUID, GPU model, driver), ``status`` "ok" or "failed", the failure's
    ``reason``, ``attempts`` made, ``seconds`` the point took on its worker and ``wall_s`` from
    submission to result as the client saw it (their difference is the fan-out's overhead).
    ``files``: files the point made on its worker (name -> bytes: a profiled point's capture) for
    the client to write (run_sweep's ``gather``); never in the JSON records."""

    point: SweepPoint
    rows: list[dict[str, Any]] = field(default_factory=list)
    where: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    reason: str = ""
    attempts: int = 1
    seconds: float = 0.0
    wall_s: float = 0.0
    files: dict[str, bytes] = field(default_factory=dict, repr=False)

    def record(self) -> dict[str, Any]:
        """The point's entry in bench.json's ``points`` list (no rows: they are in ``rows``)."""
        return {"key": self.point.key(), "point": asdict(self.point), "status": self.status, "reason": self.reason,
                "attempts": self.attempts, "seconds": round(self.seconds, 3), "wall_s": round(self.wall_s, 3),
                "where": self.where}


def where_am_i() -> dict[str, Any]:
    """WHERE_FIELDS of this process's GPU: host, GPU index (the physical one: CUDA_VISIBLE_DEVICES'
    first entry when set, as dask-cuda pins it, else CuPy's current device), UUID, model, driver.

    Sources: CuPy's device properties (name, uuid) and CUDA driver API version; NVML (pynvml, from
    nvidia-ml-py) for the UUID and the driver version when it answers. Fields it cannot learn are
    "" (no GPU, no CuPy)."""
    out: dict[str, Any] = {k: "" for k in WHERE_FIELDS} | {"host": platform.node()}
    try:
        import cupy

        dev = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(dev.id)
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
        out["gpu_index"] = visible if visible else str(dev.id)
        name = props.get("name", b"")
        out["gpu_name"] = name.decode() if isinstance(name, bytes) else str(name)
        uuid = props.get("uuid", b"")
        if isinstance(uuid, bytes) and len(uuid) == 16:
            h = uuid.hex()
            out["gpu_uuid"] = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        drv = cupy.cuda.runtime.driverGetVersion()
        out["gpu_driver"] = f"CUDA {drv // 1000}.{drv % 1000 // 10}"
    except Exception:  # no CuPy or no device: where it ran is the host alone
        return out
    out.update({k: v for k, v in _nvml(out["gpu_index"]).items() if v})
    if out["gpu_index"].startswith(("GPU-", "MIG-")):  # CUDA_VISIBLE_DEVICES named the GPU by UUID
        out["gpu_uuid"] = out["gpu_index"]
    return out


def _nvml(index: str) -> dict[str, str]:
    """NVML's driver version ('580.95.05', in place of CuPy's CUDA API version) and, for a physical
    GPU ``index`` (NVML ignores CUDA_VISIBLE_DEVICES), its UUID; {} without pynvml or NVML."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # pynvml missing or NVML unusable: CuPy's answers stand
        return {}
    try:
        out = {"gpu_driver": _text(pynvml.nvmlSystemGetDriverVersion())}
        if index.isdigit():
            out["gpu_uuid"] = _text(pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(int(index))))
        return out
    except Exception:  # one query failing (a MIG slice, an old driver) leaves the rest as CuPy gave it
        return {}
    finally:
        pynvml.nvmlShutdown()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def run_point(point: SweepPoint) -> PointResult:
    """Run one point on this process's GPU through its case (``Case.bench_point``); the rows come
    back as dicts carrying WHERE_FIELDS. Runs on a Dask worker or in-process.

    Raises what the case's bench raises (NoGpuError without a GPU, CuPy errors)."""
    from profiler_report.model.registry import get_case

    t0 = time.perf_counter()
    case = get_case(point.case)
    rows = [r.to_dict() for r in case.bench_point(point)]
    where = where_am_i()
    for r in rows:
        r.update({k: where[k] for k in WHERE_FIELDS})
    return PointResult(point, rows, where, seconds=time.perf_counter() - t0)


Runner = Callable[[SweepPoint], PointResult]


class PointStore:
    """Finished points on disk: ``folder/<commit>-<point key>.json``, one file per point, written
    atomically (util.fsio), so a sweep killed at any moment keeps what finished. Only "ok" points
    are kept; a stored point is reused only while ``needs(point)`` (files outside the store the
    result refers to, such as a profiled point's capture) are not all there. ``row_type``: the
    dataclass stored rows must fit (the case's BenchRow; None: any dicts). A file that cannot be used
    (not JSON, not this point, rows of the wrong shape) is "not done": the point runs again and
    :attr:`notes` names the file."""

    def __init__(self, folder: Path, commit: str, needs: Callable[[SweepPoint], list[Path]] | None = None,
                 row_type: type | None = None) -> None:
        self.folder, self.commit, self.needs, self.row_type = folder, commit, needs, row_type
        self.notes: list[str] = []

    def _path(self, point: SweepPoint) -> Path:
        return self.folder / f"{self.commit}-{point.key()}.json"

    def get(self, point: SweepPoint) -> PointResult | None:
        if not (path := self._path(point)).exists():
            return None
        try:
            data = json.loads(path.read_text())
            res = self._result(point, data)
        except (OSError, ValueError, RecursionError, TypeError) as exc:
            self.notes.append(f"{path} cannot be used ({str(exc)[:120]}): point {point.label()} runs again")
            return None
        if res is not None and self.needs is not None and not all(f.is_file() for f in self.needs(point)):
            return None
        return res

    def _result(self, point: SweepPoint, data: Any) -> PointResult | None:
        """The stored result, None for a failed point's record; ValueError/TypeError when unusable."""
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not a point record")
        if data.get("key") != point.key():
            raise ValueError("its key is not this point's")
        if data.get("status") != "ok":
            return None
        rows, where = data.get("rows"), data.get("where", {})
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows) or not isinstance(where, dict):
            raise ValueError("its rows are not a list of records")
        for r in rows:
            check_record(self.row_type, r)
        return PointResult(point, rows, where, "ok", "", int(data.get("attempts", 1)),
                           float(data.get("seconds", 0.0)), float(data.get("wall_s", 0.0)))

    def put(self, res: PointResult) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self._path(res.point), {**res.record(), "rows": res.rows})


def _failed(point: SweepPoint, exc: BaseException, attempts: int, wall: float) -> PointResult:
    reason = f"{type(exc).__name__}: {str(exc)[:300]}".strip()
    return PointResult(point, status="failed", reason=reason, attempts=attempts, wall_s=wall)


def run_sweep(points: list[SweepPoint], runner: Runner | None = None, *, client: Any = None,
              store: PointStore | None = None, progress: Callable[[PointResult], None] | None = None,
              retries: int = RETRIES, gather: Callable[[PointResult], None] | None = None) -> list[PointResult]:
    """Run ``points`` (in-process when ``client`` is None, else one Dask task per point) and return
    their results in the points' order. Points already in ``store`` are not run again; each new
    result is stored as it arrives. ``progress`` is called with each finished result. ``runner``
    runs one point (default :func:`run_point`; it must be importable on the workers). ``gather`` is
    called on each new "ok" result before it is stored (the profiled sweep writes the point's
    capture from ``files`` there).

    Raises:
        ProfilerReportError: in-process, the tool's own errors (NoGpuError without a GPU, a case's
            InputError): every point would fail alike, so the sweep stops with its exit code.
    """
    runner = runner or run_point
    done: dict[SweepPoint, PointResult] = {}
    todo: list[SweepPoint] = []
    for p in points:
        hit = store.get(p) if store else None
        if hit is not None:
            done[p] = hit
        elif p not in todo:
            todo.append(p)

    def finish(res: PointResult) -> None:
        done[res.point] = res
        if gather is not None and res.status == "ok":
            gather(res)
        if store is not None and res.status == "ok":
            store.put(res)
        if progress is not None:
            progress(res)

    if client is None:
        for p in todo:
            finish(_run_here(p, runner, retries))
    else:
        for res in _run_on(client, todo, runner, retries):
            finish(res)
    return [done[p] for p in points]


def _run_here(point: SweepPoint, runner: Runner, retries: int) -> PointResult:
    t0 = time.perf_counter()
    for attempt in range(1, retries + 2):
        try:
            res = runner(point)
        except ProfilerReportError:  # no GPU, bad input: every point would fail alike (its exit code)
            raise
        except Exception as exc:  # a GPU error, a CuPy error: the point fails, the sweep goes on
            if attempt > retries:
                return _failed(point, exc, attempt, time.perf_counter() - t0)
            continue
        res.attempts, res.wall_s = attempt, time.perf_counter() - t0
        return res
    raise AssertionError("unreachable")


def _run_on(client: Any, points: list[SweepPoint], runner: Runner, retries: int) -> Iterator[PointResult]:
    """One task per point on ``client``'s cluster; a task that raises or whose worker is lost
    (Dask's KilledWorker) is submitted once more, then recorded as failed."""
    import uuid

    from distributed import as_completed

    sweep = uuid.uuid4().hex[:8]  # two sweeps on one scheduler never share a task key
    started: dict[Any, tuple[SweepPoint, int, float]] = {}

    def submit(p: SweepPoint, attempt: int, t0: float) -> Any:
        fut = client.submit(runner, p, key=f"point-{p.key()}-{sweep}-{attempt}", pure=False)
        started[fut] = (p, attempt, t0)
        return fut

    queue = as_completed([submit(p, 1, time.perf_counter()) for p in points])
    for fut in queue:
        p, attempt, t0 = started.pop(fut)
        try:
            res = fut.result()
        except Exception as exc:  # the task raised, or its worker died (KilledWorker)
            if attempt > retries:
                yield _failed(p, exc, attempt, time.perf_counter() - t0)
            else:
                queue.add(submit(p, attempt + 1, t0))
            continue
        finally:
            fut.release()
        res.attempts, res.wall_s = attempt, time.perf_counter() - t0
        yield res


@contextmanager
def dask_client(cluster: str | None, scheduler: str | None) -> Iterator[Any]:
    """A ``distributed.Client``: on a new dask-cuda ``LocalCUDACluster`` (``cluster`` "local": one
    worker per visible GPU, CUDA_VISIBLE_DEVICES pinned per worker), on the running cluster at
    ``scheduler`` (an address such as tcp://10.0.0.5:8786), or None for in-process.

    Raises:
        InputError: both given, an unknown ``cluster``, the cluster extra not installed, or no
            scheduler answering at ``scheduler``.
    """
    if cluster is None and scheduler is None:
        yield None
        return
    if cluster is not None and scheduler is not None:
        raise InputError("--cluster and --scheduler both given", "pass one of them")
    if cluster not in (None, "local"):
        raise InputError(f"unknown --cluster {cluster}", "use --cluster local, or --scheduler ADDRESS")
    try:
        from distributed import Client
    except ImportError as exc:
        raise InputError(f"Dask's distributed cannot be imported ({exc})",
                         'pip install "profiler-report[cluster]"') from exc
    if cluster == "local":
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError as exc:
            raise InputError(f"dask-cuda cannot be imported ({exc})",
                             'pip install "profiler-report[cluster]"') from exc
        with LocalCUDACluster() as local, Client(local) as client:
            yield client
        return
    from profiler_report.live.scheduler import HANDSHAKE_S, check_scheduler

    assert scheduler is not None  # neither None nor a cluster: the scheduler's address
    address = check_scheduler(scheduler)
    try:
        client = Client(address, timeout=f"{2 * HANDSHAKE_S:g}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"no Dask scheduler answers at {scheduler} ({exc})",
                         "start one (dask scheduler; dask cuda worker ADDRESS on each GPU host) "
                         "or fix the address") from exc
    with client:
        yield client


def engine_name(cluster: str | None, scheduler: str | None) -> str:
    """How the sweep ran, as bench.json's ``sweep.engine`` records it."""
    if cluster == "local":
        return "dask LocalCUDACluster"
    return f"dask scheduler {scheduler}" if scheduler else "in-process"


def sweep_record(results: list[PointResult], engine: str) -> dict[str, Any]:
    """bench.json's ``sweep`` entry: the engine, every point (status, reason, where), warnings."""
    warn = mixed_gpus([r.where for r in results if r.status == "ok"])
    return {"engine": engine, "points": [r.record() for r in results], "warnings": [warn] if warn else []}
