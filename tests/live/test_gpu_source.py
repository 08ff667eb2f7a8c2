"""live/gpu.py without a GPU: the hold kernel compiles for sm_90 (nvcc, the compiler NVRTC shares
its front end with), and event_times_us's batches and retries run on a stand-in of CuPy's events;
the hold itself is tested on the device (tests/live/test_gpu_timing.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from profiler_report.live import gpu

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None and not os.environ.get("CI"), reason="nvcc not installed")
def test_the_hold_kernel_compiles_for_sm90_without_spills(tmp_path):
    assert NVCC is not None, "nvcc is not on PATH on the CI machine"
    src = tmp_path / "hold.cu"
    src.write_text(gpu._HOLD_SOURCE)
    res = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "hold.cubin"),
                          str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Compiling entry function 'hold_queue'" in res.stderr
    assert re.search(r"0 bytes spill stores", res.stderr), res.stderr


class _FakeCupy:
    """Just what event_times_us uses: events whose elapsed time is the call's index + 1 (ms), and
    a device synchronize; the hold is a _FakeHold."""

    def __init__(self):
        self.clock = 0
        outer = self

        class Event:
            def record(self):
                outer.clock += 1
                self.t = outer.clock

            def synchronize(self):
                pass

        class cuda:  # noqa: N801 (CuPy's name)
            """cupy.cuda, as far as event_times_us reaches into it."""
            pass

        cuda.Event = Event
        cuda.get_elapsed_time = staticmethod(lambda s, e: float(e.t - s.t))
        cuda.runtime = type("runtime", (), {"deviceSynchronize": staticmethod(lambda: None)})
        self.cuda = cuda


class _FakeHold:
    """A hold that reports a timeout for the holds listed in ``timeouts`` (counted from 0)."""

    def __init__(self, timeouts):
        self.timeouts, self.count, self.sizes = set(timeouts), -1, []

    def __call__(self, cupy):
        return self

    def held(self):
        import contextlib

        self.count += 1
        return contextlib.nullcontext()

    def timed_out(self):
        return self.count in self.timeouts


@pytest.mark.parametrize(("timeouts", "holds"), [((), 2), ((0,), 1 + 100 + 1), ((1,), 1 + 1 + 7)])
def test_a_timed_out_batch_is_timed_again_one_call_per_hold(monkeypatch, timeouts, holds):
    # The control flow of event_times_us without a GPU: 107 repeats are batches of 100 and 7; a
    # batch whose hold timed out is timed again one call per hold, its first times dropped.
    fake, hold = _FakeCupy(), _FakeHold(timeouts)
    monkeypatch.setattr(gpu, "import_cupy", lambda: fake)
    monkeypatch.setattr(gpu, "QueueHold", hold)
    calls = []
    us = gpu.event_times_us(lambda a, b: calls.append((a, b)), [(1, 2), (3, 4)], repeats=107, warmup=0)
    assert len(us) == 107 and hold.count + 1 == holds
    assert len(calls) == 1 + 107 + (100 if timeouts == (0,) else 7 if timeouts == (1,) else 0)
    assert calls[1] == (1, 2) and calls[2] == (3, 4)  # the pairs rotate from the first timed call


def test_a_call_that_times_out_alone_is_a_timing_error(monkeypatch):
    from profiler_report.errors import TimingError

    fake, hold = _FakeCupy(), _FakeHold(range(1000))
    monkeypatch.setattr(gpu, "import_cupy", lambda: fake)
    monkeypatch.setattr(gpu, "QueueHold", hold)
    with pytest.raises(TimingError) as exc:
        gpu.event_times_us(lambda a, b: None, [(1, 2)], repeats=30, warmup=5)
    assert exc.value.exit_code == 9 and "synchronizes with the device" in exc.value.one_line()
    assert hold.count + 1 == 2  # the batch, then its first call alone


def test_entries_timed_together_take_turns_in_rounds(monkeypatch):
    # Test values, not measurements: each call of event_times_us returns its round's number.
    calls = []

    def event_times_us(fn, pairs, repeats, warmup):
        calls.append((fn, repeats, warmup))
        return [float(len(calls))] * repeats

    monkeypatch.setattr(gpu, "event_times_us", event_times_us)
    got = gpu.interleaved_times_us([("a", []), ("b", [])], repeats=7, warmup=5, rounds=3)
    assert calls == [("a", 3, 5), ("b", 3, 5), ("a", 2, 1), ("b", 2, 1), ("a", 2, 1), ("b", 2, 1)]
    assert got == [[1.0] * 3 + [3.0] * 2 + [5.0] * 2, [2.0] * 3 + [4.0] * 2 + [6.0] * 2]
    calls.clear()
    assert gpu.interleaved_times_us([("a", [])], repeats=2, warmup=0, rounds=5) == [[1.0, 2.0]]  # rounds <= repeats


def test_each_kernel_is_compiled_as_a_module_of_its_own_at_once():
    import threading

    made: list[tuple[str, tuple[str, ...], str]] = []

    class RawModule:  # CuPy's, recording what it is asked to compile and where
        def __init__(self, code, options, name_expressions):
            assert len(name_expressions) == 1
            self.name, self.compiled_in = name_expressions[0], None
            made.append((code, options, self.name))

        def get_function(self, name):
            assert name == self.name, "a kernel asked of another kernel's module"
            self.compiled_in = self.compiled_in or threading.current_thread().name
            return f"fn:{name}"

    class Cupy:
        pass

    Cupy.RawModule = RawModule
    names = ["k<float>", "k2<float,32>", "k<float>"]
    mods = gpu.compile_kernels(Cupy, "src", ("-std=c++17",), names)
    assert sorted(n for _, _, n in made) == ["k2<float,32>", "k<float>"]  # a repeated name compiled once
    assert all(code == "src" and opts == ("-std=c++17",) for code, opts, _ in made)
    assert all(m.compiled_in and m.compiled_in != "MainThread" for m in mods.modules.values())
    assert mods.get_function("k2<float,32>") == "fn:k2<float,32>"


def test_bits_differ_counts_and_finds_the_first_difference_on_the_host():
    import numpy as np

    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert gpu.bits_differ(np, ref.copy(), ref) == (0, -1)
    out = ref.copy()
    out[2, 1], ref[1, 3] = 99.0, 0.0
    out[1, 3] = np.float32(-0.0)  # a signed zero differs from 0.0
    assert gpu.bits_differ(np, out, ref) == (2, 7)
    nan_a, nan_b = np.full(4, np.nan, np.float32), np.full(4, np.nan, np.float32)
    nan_b.view(np.uint32)[2] ^= 1  # another NaN payload
    assert gpu.bits_differ(np, nan_a, nan_b) == (1, 2)
    assert gpu.bits_differ(np, ref.astype(np.float64), ref) == (12, 0)  # other item size: all differ
    assert gpu.bits_differ(np, ref.T.copy(), ref) == (12, 0)  # other shape
    assert gpu.bits_differ(np, np.empty(0, np.float16), np.empty(0, np.float16)) == (0, -1)
