"""GPU helpers shared by every case: CuPy and the device, poisoning, CUDA-event timing, NVTX
ranges. CuPy is imported lazily, so the rest of the tool (and ``--help``) works without a GPU."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from profiler_report.errors import NoGpuError


def import_cupy() -> Any:
    """Import CuPy and check that a GPU is visible.

    Raises:
        NoGpuError: CuPy is not installed or no CUDA device can be used.
    """
    try:
        import cupy
    except ImportError as exc:
        raise NoGpuError(f"CuPy is not installed ({exc})") from exc
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise NoGpuError("no CUDA device is visible")
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise NoGpuError(f"no usable CUDA device ({exc})") from exc
    return cupy


def device_info() -> dict[str, Any]:
    """GPU name, SM count, compute capability, driver and runtime versions, CuPy version."""
    cupy = import_cupy()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    drv = cupy.cuda.runtime.driverGetVersion()
    rt = cupy.cuda.runtime.runtimeGetVersion()
    return {
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "sm_count": int(props["multiProcessorCount"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "cuda_driver_api": f"{drv // 1000}.{drv % 1000 // 10}",
        "cuda_runtime": f"{rt // 1000}.{rt % 1000 // 10}",
        "cupy": cupy.__version__,
        "l2_bytes": int(props.get("l2CacheSize", 0)),
    }


def poison(cupy: Any, arr: Any) -> None:
    """Fill with all-ones bytes (NaN for floats) so unwritten elements never match."""
    arr.view(cupy.uint8).fill(0xFF)


@dataclass
class Timing:
    """Event-timed launches of one stage (or a peer) at one size. Times in microseconds.

    Source: CUDA events around each launch, after warm-up, rotating input/output buffer pairs;
    ``gbps`` is the case's work model (bytes read + written per launch) over the median time.
    ``size`` holds the case's dimensions.
    """

    name: str
    size: dict[str, int]
    dtype: str
    repeats: int
    median_us: float
    p10_us: float
    p90_us: float
    min_us: float
    gbps: float
    source: str = "cuda-events"


def event_times_us(fn: Any, pairs: list[tuple[Any, Any]], repeats: int, warmup: int) -> list[float]:
    """``repeats`` CUDA-event-timed calls of ``fn(src, dst)`` after ``warmup`` untimed ones,
    rotating buffer pairs; sorted, in microseconds."""
    cupy = import_cupy()
    for i in range(warmup):
        fn(*pairs[i % len(pairs)])
    cupy.cuda.runtime.deviceSynchronize()
    starts = [cupy.cuda.Event() for _ in range(repeats)]
    ends = [cupy.cuda.Event() for _ in range(repeats)]
    for i in range(repeats):
        src, dst = pairs[i % len(pairs)]
        starts[i].record()
        fn(src, dst)
        ends[i].record()
    ends[-1].synchronize()
    return sorted(cupy.cuda.get_elapsed_time(s, e) * 1000.0 for s, e in zip(starts, ends, strict=True))


def timing(name: str, us: list[float], size: dict[str, int], dtype: str, bytes_moved: int) -> Timing:
    """A :class:`Timing` from sorted event times: median, p10, p90, min, GB/s."""
    q = statistics.quantiles(us, n=10)
    med = statistics.median(us)
    return Timing(name, dict(size), dtype, len(us), med, q[0], q[-1], us[0], bytes_moved / (med * 1e3))


def memcpy_fn(cupy: Any) -> Any:
    def fn(src: Any, dst: Any) -> None:
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                      cupy.cuda.runtime.memcpyDeviceToDevice,
                                      cupy.cuda.get_current_stream().ptr)
    return fn


def push_range(name: str) -> Any:
    try:
        import nvtx

        return nvtx.annotate(name)
    except ImportError:  # CuPy's own NVTX binding marks the same default domain
        import contextlib

        from cupy.cuda import nvtx as cnvtx

        @contextlib.contextmanager
        def rng() -> Any:
            cnvtx.RangePush(name)
            try:
                yield
            finally:
                cnvtx.RangePop()

        return rng()


def asdicts(items: list[Any]) -> list[dict[str, Any]]:
    """JSON-ready dicts; a ``size`` field is spread into its dimensions (``rows``, ``cols``)."""
    out = []
    for item in items:
        d = asdict(item)
        out.append({k: v for k, v in d.items() if k != "size"} | d.get("size", {}))
    return out
