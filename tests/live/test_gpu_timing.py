"""GPU tests of live/gpu.py's timing (marker ``gpu``; skipped without a GPU, run on the device)."""

from __future__ import annotations

import statistics
import time

import pytest

from profiler_report.errors import InputError, TimingError
from profiler_report.live import gpu

pytestmark = pytest.mark.gpu

#: Host time spent before each timed launch, far above the launch's GPU time (a 1 MiB copy).
HOST_DELAY_S = 200e-6


def _slow_host_copy():
    cupy = gpu.import_cupy()
    src = cupy.arange(1 << 18, dtype=cupy.float32)
    dst = cupy.empty_like(src)

    def fn(a, b):
        end = time.perf_counter() + HOST_DELAY_S
        while time.perf_counter() < end:
            pass
        b[...] = a
    return fn, [(src, dst)]


def test_a_held_queue_times_the_gpu_not_the_host():
    # Unheld, each event pair would span the host's 200 us before the launch (the GPU idles there).
    fn, pairs = _slow_host_copy()
    us = gpu.event_times_us(fn, pairs, repeats=30, warmup=3)
    assert len(us) == 30 and us == sorted(us) and us[0] > 0
    assert statistics.median(us) < 0.25 * HOST_DELAY_S * 1e6, us


def test_held_batches_cover_every_repeat():
    fn, pairs = _slow_host_copy()
    assert len(gpu.event_times_us(fn, pairs, repeats=gpu.HOLD_BATCH + 7, warmup=0)) == gpu.HOLD_BATCH + 7


def test_a_call_that_synchronizes_ends_the_hold_by_its_timeout(monkeypatch):
    monkeypatch.setattr(gpu, "HOLD_TIMEOUT_S", 0.3)
    cupy = gpu.import_cupy()
    fn, pairs = _slow_host_copy()

    def syncing(a, b):
        fn(a, b)
        cupy.cuda.runtime.deviceSynchronize()  # waits for the hold itself: only its timeout ends it
    with pytest.raises(TimingError, match="synchronizes with the device"):
        gpu.event_times_us(syncing, pairs, repeats=20, warmup=0)


def test_a_batch_whose_hold_timed_out_is_timed_again_one_call_per_hold(monkeypatch):
    # The first timed call waits on the device once (as a module's first load can): that batch's
    # hold times out, and the batch is timed again, every time still the GPU's alone.
    monkeypatch.setattr(gpu, "HOLD_TIMEOUT_S", 0.3)
    cupy = gpu.import_cupy()
    fn, pairs = _slow_host_copy()
    calls = []

    def once(a, b):
        fn(a, b)
        calls.append(1)
        if len(calls) == 2:  # the first timed call (one warm-up call before it)
            cupy.cuda.runtime.deviceSynchronize()
    us = gpu.event_times_us(once, pairs, repeats=30, warmup=0)
    assert len(us) == 30 and statistics.median(us) < 0.25 * HOST_DELAY_S * 1e6, us
    assert len(calls) == 1 + 30 + 30


def test_no_repeats_or_no_pairs_is_bad_input():
    fn, pairs = _slow_host_copy()
    with pytest.raises(InputError):
        gpu.event_times_us(fn, pairs, repeats=0, warmup=1)
    with pytest.raises(InputError):
        gpu.event_times_us(fn, [], repeats=5, warmup=1)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_bits_differ_counts_every_difference_and_the_lowest_index(dtype):
    import numpy as np

    cupy = gpu.import_cupy()
    ref = cupy.random.default_rng(1).standard_normal((1023, 2049)).astype(dtype)
    assert gpu.bits_differ(cupy, ref.copy(), ref) == (0, -1)
    out = ref.copy()
    where = np.random.default_rng(2).choice(ref.size, 500, replace=False)
    words = out.view(f"u{out.dtype.itemsize}").reshape(-1)
    words[cupy.asarray(where)] ^= 1  # one bit flipped: a NaN payload or a signed zero counts alike
    assert gpu.bits_differ(cupy, out, ref) == (500, int(where.min()))
    gpu.poison(cupy, out)
    assert gpu.bits_differ(cupy, out, ref) == (ref.size, 0)
    # a transposed (non-contiguous) view compares in its own C order
    assert gpu.bits_differ(cupy, ref.T, cupy.ascontiguousarray(ref.T)) == (0, -1)
