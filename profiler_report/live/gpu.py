"""GPU helpers."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from profiler_report.errors import NoGpuError
from profiler_report.util.dtypes import ITEMSIZE


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


def random_matrix(cupy: Any, rows: int, cols: int, dtype: str, seed: int = 0) -> Any:
    """Uniform values in [1, 2): random, never zero, exactly representable after the cast."""
    rng = cupy.random.default_rng(seed)
    return (rng.random((rows, cols), dtype=cupy.float32) + 1).astype(dtype)


def poison(cupy: Any, arr: Any) -> None:
    """Fill with all-ones bytes (NaN for floats) so unwritten elements never match."""
    arr.view(cupy.uint8).fill(0xFF)


def _bits(cupy: Any, arr: Any) -> Any:
    return arr.view({2: cupy.uint16, 4: cupy.uint32, 8: cupy.uint64}[arr.dtype.itemsize])


@dataclass
class Timing:
    """Event-timed launches of one stage (or a peer) at one size. Times in microseconds.

    Source: CUDA events around each launch, after warm-up, rotating ``buffers`` input/output
    pairs; GB/s counts bytes read + written (2 * rows * cols * itemsize) / median time.
    """

    name: str
    rows: int
    cols: int
    dtype: str
    repeats: int
    median_us: float
    p10_us: float
    p90_us: float
    min_us: float
    gbps: float
    source: str = "cuda-events"


def time_launches(name: str, fn: Any, pairs: list[tuple[Any, Any]], rows: int, cols: int,
                  dtype: str, repeats: int, warmup: int) -> Timing:
    """Median of ``repeats`` event-timed calls of ``fn(src, dst)``, rotating buffer pairs."""
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
    us = sorted(cupy.cuda.get_elapsed_time(s, e) * 1000.0 for s, e in zip(starts, ends, strict=True))
    q = statistics.quantiles(us, n=10)
    med = statistics.median(us)
    nbytes = 2 * rows * cols * ITEMSIZE[dtype]
    return Timing(name, rows, cols, dtype, repeats, med, q[0], q[-1], us[0], nbytes / (med * 1e3))


def make_pairs(cupy: Any, rows: int, cols: int, dtype: str, buffers: int) -> list[tuple[Any, Any]]:
    return [
        # The output buffer also serves the copy kernels: they write the same number of bytes.
        (random_matrix(cupy, rows, cols, dtype, seed=i + 1), cupy.empty((cols, rows), dtype=dtype))
        for i in range(buffers)
    ]


def memcpy_fn(cupy: Any) -> Any:
    def fn(src: Any, dst: Any) -> None:
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                      cupy.cuda.runtime.memcpyDeviceToDevice,
                                      cupy.cuda.get_current_stream().ptr)
    return fn


def _push_range(name: str) -> Any:
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
    return [asdict(i) for i in items]
