"""GPU helpers shared by every case: CuPy and the device, poisoning, CUDA-event timing, NVTX
ranges. CuPy is imported lazily, so the rest of the tool (and ``--help``) works without a GPU."""

from __future__ import annotations

import functools
import statistics
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from typing import Any

from profiler_report.errors import InputError, NoGpuError, TimingError


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


def free_cached_memory() -> None:
    """Hand the device memory CuPy's pool keeps for reuse back to the driver: before another
    process (the peers') allocates its own buffers at the run's size."""
    import_cupy().get_default_memory_pool().free_all_blocks()


class KernelModules:
    """A CUDA source compiled once per kernel: name expression -> its own ``cupy.RawModule``
    (:func:`compile_kernels`). ``get_function(name)`` as a single module's."""

    def __init__(self, modules: dict[str, Any]) -> None:
        self.modules = modules

    def get_function(self, name: str) -> Any:
        return self.modules[name].get_function(name)


def compile_kernels(cupy: Any, source: str, options: tuple[str, ...], names: list[str]) -> KernelModules:
    """Compile ``source`` with NVRTC once per name expression of ``names``, side by side in threads
    (NVRTC runs without the GIL), each into CuPy's kernel cache on disk.

    Why one module per kernel: a module's compile time is the sum of its kernels' (the transpose's
    twelve took 1.8 s as one module on the H100's host, 1.3 s as one module each in threads), and
    CuPy's disk cache is keyed by the name expressions too, so one module per kernel is compiled
    once and then found by every process and phase of a run that needs that kernel, whatever else
    it compiles beside it.

    Raises:
        What ``cupy.RawModule`` raises (``CompileException`` with NVRTC's log).
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    def one(name: str) -> Any:
        module = cupy.RawModule(code=source, options=options, name_expressions=[name])
        module.get_function(name)  # CuPy compiles on first use: here, in this thread
        return module

    names = list(dict.fromkeys(names))
    with ThreadPoolExecutor(max_workers=max(1, min(len(names), os.cpu_count() or 1))) as pool:
        return KernelModules(dict(zip(names, pool.map(one, names), strict=True)))


def resident_blocks(cupy: Any, kernel: Any, threads: int, shared_bytes: int) -> int:
    """Blocks of ``kernel`` (a ``cupy.RawKernel``) the GPU holds at once with ``threads`` threads and
    ``shared_bytes`` of dynamic shared memory a block: ``cuOccupancyMaxActiveBlocksPerMultiprocessor``
    times the SM count (``cudaDevAttrMultiProcessorCount``).

    Raises:
        cupy.cuda.driver.CUDADriverError: the driver refuses the query (a kernel or size it cannot run).
    """
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, shared_bytes)
    return per_sm * cupy.cuda.Device().attributes["MultiProcessorCount"]


def poison(cupy: Any, arr: Any) -> None:
    """Fill with all-ones bytes (NaN for floats) so unwritten elements never match."""
    arr.view(cupy.uint8).fill(0xFF)


#: One thread per element: count the elements whose bits differ and keep the lowest such index.
#: CuPy's own array_equal and flatnonzero run reductions and scans whose kernels NVRTC compiles on
#: first use, about 1.5 s each on an empty kernel cache (a fresh machine's run paid it in every
#: process that checked an output); this elementwise kernel compiles in about 0.1 s.
_DIFFER_BODY = "if (a != b) { atomicAdd(&found[0], 1ull); atomicMin(&found[1], (unsigned long long)i); }"


@functools.cache
def _differ_kernel(cupy: Any) -> Any:
    return cupy.ElementwiseKernel("T a, T b", "raw uint64 found", _DIFFER_BODY, "pr_bits_differ")


def bits_differ(cupy: Any, out: Any, ref: Any) -> tuple[int, int]:
    """(how many elements of ``out`` differ from ``ref``, the C-order flat index of the first that
    does, -1 when none), bit for bit: both viewed as unsigned integers of their item size, so NaN
    payloads and signed zeros count. Arrays of other shapes or item sizes differ everywhere:
    (``out.size``, 0). ``cupy`` is CuPy (device arrays, one kernel launch and a copy of two
    counters back) or NumPy (host arrays)."""
    if out.shape != ref.shape or out.dtype.itemsize != ref.dtype.itemsize:
        return int(out.size), 0
    width = f"u{out.dtype.itemsize}"
    a, b = out.view(width).reshape(-1), ref.view(width).reshape(-1)
    if a.size == 0:
        return 0, -1
    if not hasattr(cupy, "ElementwiseKernel"):  # NumPy
        wrong = cupy.flatnonzero(a != b)
        return int(wrong.size), int(wrong[0]) if wrong.size else -1
    found = cupy.array([0, 2**64 - 1], dtype=cupy.uint64)
    _differ_kernel(cupy)(a, b, found)
    count, first = (int(v) for v in cupy.asnumpy(found))
    return count, first if count else -1


@dataclass
class Timing:
    """Event-timed launches of one stage (or a peer) at one size. Times in microseconds.

    Source: CUDA events around each launch, after warm-up, rotating input/output buffer pairs,
    the launches queued behind a hold (:func:`event_times_us`: GPU time, not host overhead);
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
    #: Floating-point operations per launch (the case's work model) over the median, in TFLOP/s;
    #: 0 where the work model counts none.
    tflops: float = 0.0


#: How :func:`event_times_us` times (the ``event_timing`` of a live run's provenance).
EVENT_TIMING = "CUDA events per call, the calls queued behind a hold: GPU time, not host launch overhead"
#: Seconds the GPU may wait for the host to queue one batch of timed calls (:class:`QueueHold`).
HOLD_TIMEOUT_S = 2.0
#: Timed calls queued behind one hold. Should one batch's launches fill CUDA's queue of pending
#: work (a call of many launches), or a call wait on the device once (a module's first load), the
#: hold times out; the batch is then timed again one call per hold (:func:`event_times_us`).
HOLD_BATCH = 100

_HOLD_SOURCE = r"""
extern "C" __global__ void hold_queue(const volatile int* release, volatile int* timed_out,
                                      unsigned long long timeout_ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (release[0] == 0) {
        __nanosleep(2000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            timed_out[0] = 1;
            return;
        }
    }
}
"""


class QueueHold:
    """A one-thread kernel that keeps the current stream waiting until the host releases it
    (a flag in pinned host memory, which the GPU reads directly: unified addressing), or until
    ``timeout_s`` has passed.

    Why: a call timed between two CUDA events on an idle GPU is timed from the first event to the
    kernel's end, host launch overhead included; with the stream held until every call of a batch
    is queued, each event pair measures the GPU's time only. On the H200 a 16-byte copy of
    4096x4096 float16 (20 us on the GPU) timed 29-30 us per launch unheld once the host had idled
    (scripts/experiments/results/README.md, "Timing behind a hold"). NVBench's blocking kernel
    does the same for C++ benchmarks.
    """

    def __init__(self, cupy: Any, timeout_s: float | None = None) -> None:
        import numpy

        timeout_s = HOLD_TIMEOUT_S if timeout_s is None else timeout_s

        self._cupy = cupy
        self._mem = cupy.cuda.alloc_pinned_memory(8)
        self._flags = numpy.frombuffer(self._mem, dtype=numpy.int32, count=2)
        self._kernel = cupy.RawKernel(_HOLD_SOURCE, "hold_queue")
        self._args = (numpy.uint64(self._mem.ptr), numpy.uint64(self._mem.ptr + 4),
                      numpy.uint64(int(timeout_s * 1e9)))

    @contextmanager
    def held(self) -> Iterator[None]:
        """The stream waits while the body queues work; released on exit (even on an error)."""
        self._flags[:] = 0
        self._kernel((1,), (1,), self._args)
        try:
            yield
        except BaseException:
            self._flags[0] = 1
            with suppress(Exception):  # the hold reads the flag until it sees it: keep the memory till then
                self._cupy.cuda.get_current_stream().synchronize()
            raise
        self._flags[0] = 1

    def timed_out(self) -> bool:
        """Whether the last hold ended by its timeout (read after synchronizing)."""
        return bool(self._flags[1])


def _held_batch(cupy: Any, hold: QueueHold, fn: Any, pairs: list[tuple[Any, Any]], first: int,
                count: int, per_hold: int) -> list[float] | None:
    """Calls ``first`` .. ``first + count - 1``, ``per_hold`` of them behind each hold; their
    times in microseconds, or None when a hold timed out (those times include host time)."""
    us: list[float] = []
    for start_at in range(first, first + count, per_hold):
        events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(min(per_hold, first + count - start_at))]
        with hold.held():
            for i, (start, end) in enumerate(events):
                src, dst = pairs[(start_at + i) % len(pairs)]
                start.record()
                fn(src, dst)
                end.record()
        events[-1][1].synchronize()
        if hold.timed_out():
            return None
        us += [cupy.cuda.get_elapsed_time(s, e) * 1000.0 for s, e in events]
    return us


def event_times_us(fn: Any, pairs: list[tuple[Any, Any]], repeats: int, warmup: int) -> list[float]:
    """``repeats`` CUDA-event-timed calls of ``fn(src, dst)`` after ``warmup`` untimed ones (at
    least one: it loads the modules and fills the memory pools), rotating buffer pairs; sorted, in
    microseconds.

    The timed calls are queued behind a :class:`QueueHold`, :data:`HOLD_BATCH` at a time, so each
    time is the GPU's, from one call's start event to its end event, never the host's. A batch
    whose hold timed out is timed again with one call behind each hold.

    Raises:
        InputError: ``repeats`` below 1 or no buffer pairs.
        TimingError: a single call kept the GPU waiting :data:`HOLD_TIMEOUT_S` (it synchronizes
            with the device, or the host stalled that long).
    """
    if repeats < 1 or not pairs:
        raise InputError(f"event timing needs at least one repeat and one buffer pair, got {repeats} and "
                         f"{len(pairs)}", "pass repeats >= 1 and the (input, output) pairs to rotate")
    cupy = import_cupy()
    for i in range(max(warmup, 1)):
        fn(*pairs[i % len(pairs)])
    cupy.cuda.runtime.deviceSynchronize()
    hold = QueueHold(cupy)
    us: list[float] = []
    for first in range(0, repeats, HOLD_BATCH):
        count = min(HOLD_BATCH, repeats - first)
        got = _held_batch(cupy, hold, fn, pairs, first, count, count)
        if got is None:
            got = _held_batch(cupy, hold, fn, pairs, first, count, 1)
        if got is None:
            raise TimingError(f"the GPU waited {HOLD_TIMEOUT_S:g} s for the host to queue one timed call: the "
                              "call synchronizes with the device, or the host stalled")
        us += got
    return sorted(us)


#: Rounds that the timed calls of several entries are split into (:func:`interleaved_times_us`).
TIMING_ROUNDS = 5


def interleaved_times_us(entries: list[tuple[Any, list[tuple[Any, Any]]]], repeats: int, warmup: int,
                         rounds: int = TIMING_ROUNDS) -> list[list[float]]:
    """:func:`event_times_us` of several ``(fn, pairs)`` entries, their ``repeats`` calls split into
    ``rounds`` rounds in which the entries take turns (``warmup`` untimed calls before an entry's
    first round, one before each later one); each entry's times sorted, in microseconds.

    Why: a GPU's clock follows its power and temperature. Timed one after the other, the entries
    timed first after an idle spell run at a higher clock than those timed after seconds of
    tensor-core work: on an H100 cuBLAS's bf16 GEMM at 8192^3 timed 1366 us first and 1485 us after
    the eight stages of its ladder, the stages between moving under 2 % (reports/h100-hgemm,
    bench.json against timings.json). Taking turns gives every entry the same clock history.

    Raises:
        InputError, TimingError: as :func:`event_times_us`.
    """
    rounds = max(1, min(rounds, repeats))
    sizes = [repeats // rounds + (1 if r < repeats % rounds else 0) for r in range(rounds)]
    out: list[list[float]] = [[] for _ in entries]
    for r, n in enumerate(sizes):
        for i, (fn, pairs) in enumerate(entries):
            out[i] += event_times_us(fn, pairs, n, warmup if r == 0 else 1)
    return [sorted(u) for u in out]


def timing(name: str, us: list[float], size: dict[str, int], dtype: str, bytes_moved: int, flops: int = 0) -> Timing:
    """A :class:`Timing` from sorted event times: median, p10, p90, min, GB/s, and TFLOP/s
    (``flops`` per launch over the median; 0 for a launch the work model counts no flops in)."""
    q = statistics.quantiles(us, n=10)
    med = statistics.median(us)
    return Timing(name, dict(size), dtype, len(us), med, q[0], q[-1], us[0], bytes_moved / (med * 1e3),
                  tflops=flops / (med * 1e6))


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
