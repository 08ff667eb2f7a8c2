"""Test doubles for the GPU side and for ncu, so fault paths run on machines without either.

Nothing here is a measurement: the fake GPU reports the name "TEST DOUBLE (no GPU)" and timings
marked ``source = "test double"``; fake ncu executables print the real messages of ncu 2025.3.1
(copied from its output) and exit as it does. Everything is written under pytest's tmp_path.

Used in-process (``install_fake_gpu(monkeypatch)``) and by subprocess CLI tests::

    python -c "import fakes; fakes.main()" run --no-counters --out DIR ...

with FAKE_WRONG_STAGES=smem,padded making those stages fail validation.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

#: ncu 2025.3.1's messages for the failure modes (verbatim).
NCU_PERM = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
            "Counters on the target device 0. For instructions on enabling permissions and to get more "
            "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
NCU_NO_KERNELS = "==WARNING== No kernels were profiled."
NCU_CONNECTED = "==PROF== Connected to process 816 (/usr/bin/python3.12)"
NCU_PROFILING = '==PROF== Profiling "transpose_naive" - 0: 0%....50%....100% - 38 passes'
#: The line ncu prints for a launch it could not profile, while it may still exit 0 (the form seen
#: in ncu's output, e.g. NVIDIA/PyProf issue 142; kernel name and pid are ours).
NCU_FAILED_KERNEL = '==ERROR== Failed to profile kernel "transpose_smem" in process 1523'


def write_fake_ncu(folder: Path, body: str, name: str = "ncu") -> Path:
    """An executable shell script ``folder/name`` running ``body`` (a fake ncu)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_ncu_printing(folder: Path, lines: list[str], status: int, sleep: float = 0) -> Path:
    """A fake ncu that prints ``lines``, optionally sleeps, and exits with ``status``."""
    body = "\n".join(f"echo '{line}'" for line in lines)
    if sleep:
        body += f"\nsleep {sleep}"
    return write_fake_ncu(folder, body + f"\nexit {status}")


def fake_ncu_writing(folder: Path, report: Path | None, lines: list[str], status: int = 0) -> Path:
    """A fake ncu that prints ``lines``, copies ``report`` (a real committed .ncu-rep) to the
    ``--export`` path it is given, as ncu writes its report there, and exits with ``status``;
    ``report`` None writes nothing (an ncu that exits 0 without a report)."""
    body = 'out=""\nwhile [ $# -gt 0 ]; do [ "$1" = "--export" ] && out="$2"; shift; done\n'
    body += "\n".join(f"echo '{line}'" for line in lines)
    if report is not None:
        body += f'\nif [ -n "$out" ]; then cp "{report}" "$out.ncu-rep"; fi'
    return write_fake_ncu(folder, body + f"\nexit {status}")


def wrong_stages() -> set[str]:
    return {s for s in os.environ.get("FAKE_WRONG_STAGES", "").split(",") if s}


def _peers_in_process(patch: Any) -> None:
    """The peers timed in the test's own process, where the doubles are: no peers' process (a
    child would import the real CuPy; tests/live/test_peers_process.py tests that process)."""
    from profiler_report.live import session

    patch.setattr(session, "start_peers", lambda rc, cfg, case: None)


def install_fake_gpu(patch: Any) -> None:
    """Replace the CuPy-backed functions of profiler_report.live (gpu, kernels) with test doubles.

    ``patch`` is pytest's monkeypatch (or anything with ``setattr(obj, name, value)``).
    """
    from profiler_report.live import gpu
    from profiler_report.live import kernels as kmod

    def device_info() -> dict[str, Any]:
        return {"gpu": "TEST DOUBLE (no GPU)", "sm_count": 0, "compute_capability": "test",
                "cuda_driver_api": "test", "cuda_runtime": "test", "cupy": "test", "l2_bytes": 0}

    def compile_module(case: Any, dtype: str, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, str]]:
        return None, {}

    def validate(kernels: Any, stage: Any, size: dict[str, int], seed: int = 0) -> Any:
        if stage.id in wrong_stages():
            return kmod.Validation(stage.id, dict(size), kernels.dtype, False, 1, (0, 1),
                                   f"stage {stage.id} is wrong at {kernels.case.size_text(size)} {kernels.dtype}: "
                                   "test double reports 1 wrong element")
        return kmod.Validation(stage.id, dict(size), kernels.dtype, True)

    def time_stages(kernels: Any, stages: list[Any], size: dict[str, int], repeats: int, warmup: int,
                    buffers: int) -> list[Any]:
        names = ["memcpy", *[s.id for s in stages]]
        nbytes = kernels.case.work(stages[0], size, kernels.dtype).bytes_moved
        # Test values, not measurements: each later stage 5 us faster than the one before.
        return [gpu.Timing(n, dict(size), kernels.dtype, repeats, 100.0 - 5 * i, 99.0 - 5 * i, 101.0 - 5 * i,
                           98.0 - 5 * i, nbytes / ((100.0 - 5 * i) * 1e3), source="test double")
                for i, n in enumerate(names)]

    from profiler_report.model.base import Case

    patch.setattr(Case, "choose_configs", choose_configs)
    patch.setattr(gpu, "import_cupy", lambda: None)
    patch.setattr(gpu, "device_info", device_info)
    patch.setattr(kmod, "compile_module", compile_module)
    patch.setattr(kmod, "validate", validate)
    patch.setattr(kmod, "time_stages", time_stages)
    _peers_in_process(patch)


class _Setattr:
    @staticmethod
    def setattr(obj: Any, name: str, value: Any) -> None:
        setattr(obj, name, value)


def main() -> None:
    """CLI entry with the fake GPU installed (for subprocess tests)."""
    install_fake_gpu(_Setattr())
    from profiler_report.cli import entry

    sys.argv[0] = "profiler-report"
    entry()


# --------------------------------------------------------------------------------------------
# A CPU stand-in for CuPy: numpy arrays, Python functions as kernels. The tool's own validate,
# timing and report code runs unchanged on it; only the launches are Python and the event times
# test values (marked as such), never measurements.


class NumpyCupy:
    """The slice of CuPy's API the cases and the live side use, backed by numpy."""

    def __init__(self) -> None:
        import types

        import numpy

        self._np = numpy
        self.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(deviceSynchronize=lambda: None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._np, name)

    def asnumpy(self, a: Any) -> Any:
        return self._np.asarray(a)


class FakeKernel:
    """A launched "kernel": ``fn(grid, block, *args)`` in Python."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.max_dynamic_shared_size_bytes = 0

    def __call__(self, grid: Any, block: Any, args: Any, shared_mem: int = 0) -> None:
        self.fn(grid, block, *args)


class FakeModule:
    """A compiled module whose functions are Python: ``kernels`` maps a kernel name (the name
    expression without its template arguments) to ``fn(grid, block, *args)``."""

    def __init__(self, kernels: dict[str, Any]) -> None:
        self.kernels = kernels

    def get_function(self, name_expression: str) -> FakeKernel:
        return FakeKernel(self.kernels[name_expression.split("<")[0]])


def install_numpy_gpu(patch: Any, kernels: dict[str, Any], compile_error: Exception | None = None) -> NumpyCupy:
    """Run the live side on the CPU: CuPy is :class:`NumpyCupy`, NVRTC gives a
    :class:`FakeModule` of ``kernels`` (or raises ``compile_error`` the way cupy.RawModule does),
    CUDA-event times are test values. Validation, buffers, the case's methods and the report
    are the tool's own code."""
    from profiler_report.live import gpu
    from profiler_report.live import kernels as kmod

    np_cupy = NumpyCupy()

    class RawModule:
        def __init__(self, code: str, options: Any, name_expressions: list[str]) -> None:
            if compile_error is not None:
                raise compile_error
            self.module = FakeModule(kernels)

        def get_function(self, name: str) -> FakeKernel:
            return self.module.get_function(name)

    np_cupy.RawModule = RawModule  # type: ignore[attr-defined]

    def device_info() -> dict[str, Any]:
        return {"gpu": "TEST DOUBLE (no GPU)", "sm_count": 0, "compute_capability": "test",
                "cuda_driver_api": "test", "cuda_runtime": "test", "cupy": "test (numpy)", "l2_bytes": 0}

    def event_times_us(fn: Any, pairs: Any, repeats: int, warmup: int) -> list[float]:
        fn(*pairs[0])  # the launch runs (and may raise) as it would on the GPU
        return [10.0 + 0.01 * i for i in range(repeats)]  # test values, not measurements

    patch.setattr(gpu, "import_cupy", lambda: np_cupy)
    patch.setattr(kmod, "import_cupy", lambda: np_cupy)
    patch.setattr(gpu, "device_info", device_info)
    patch.setattr(gpu, "event_times_us", event_times_us)
    patch.setattr(kmod, "memcpy_fn", lambda cupy: lambda src, dst: dst.__setitem__(slice(None), src))
    from profiler_report.model.base import Case

    patch.setattr(Case, "choose_configs", choose_configs)
    _peers_in_process(patch)
    return np_cupy


def choose_configs(case: Any, size: dict[str, int], dtype: str, repeats: int, stage: Any) -> dict[str, Any]:
    """Stands in for :meth:`Case.choose_configs` (which times candidates on the GPU). Test values,
    not measurements: the manifest's configuration kept, a runner-up 1 us slower."""
    default = f"[{','.join(stage.targs)}]"
    return {"stage": stage.id, "chosen": default, "targs": list(stage.targs), "chosen_us": 50.0,
            "runner_up": "[test]", "runner_up_us": 51.0, "default": default, "default_us": 50.0,
            "candidates": 2, "how": "test double", "size": dict(size), "dtype": dtype}


class CompileException(Exception):
    """Stands in for ``cupy.cuda.compiler.CompileException``: its message is the compiler's log
    (the live side recognises it by class name, as it does cupy's)."""


# --------------------------------------------------------------------------------------------
# A sweep point-runner for live/fanout.py on CPU Dask workers. Its rows are the reduction's own
# BenchRow with test values (note "test double"), never measurements. FAKE_FANOUT_DIR (inherited
# by the worker processes) holds the controls: a file ``fail-once-KEY`` makes that point raise once
# (the file is removed), ``fail-always-KEY`` always; ``die-once-KEY`` / ``die-always-KEY`` kill the
# worker process (a lost worker); ``sleep`` holds seconds to sleep per point. Every run appends
# "KEY PID" to ``runs.log`` (which process ran which point).


def fanout_dir() -> Path:
    return Path(os.environ["FAKE_FANOUT_DIR"])


def fake_point_runner(point: Any) -> Any:
    """Run ``point`` as a test double: see the block comment above."""
    import time

    from profiler_report.cases.reduction.bench import ReductionRow
    from profiler_report.live.fanout import WHERE_FIELDS, PointResult, where_am_i

    folder, key = fanout_dir(), point.key()
    with open(folder / "runs.log", "a") as log:
        log.write(f"{key} {os.getpid()}\n")
    sleep = folder / "sleep"
    if sleep.exists():
        time.sleep(float(sleep.read_text()))
    for how in ("fail", "die"):
        once, always = folder / f"{how}-once-{key}", folder / f"{how}-always-{key}"
        if once.exists() or always.exists():
            if once.exists():
                once.unlink()
            if how == "die":
                os._exit(1)
            raise RuntimeError(f"test double: CUDA error at {point.label()}")
    n = point.dims.get("n", 0)
    rows = [ReductionRow(f"stage {i} [{point.unit}]", "stage", {"n": n}, point.dtype, 10.0 + i, 9.0 + i, 11.0 + i,
                         n * 4 / ((10.0 + i) * 1e3), 100.0, "test double", "test double").to_dict()
            for i in range(2)]
    where = {**where_am_i(), "pid": os.getpid()}
    for r in rows:
        r.update({k: where[k] for k in WHERE_FIELDS})
    return PointResult(point, rows, where, seconds=0.0)


def fanout_runs() -> list[tuple[str, int]]:
    """(point key, pid) of every fake_point_runner call so far, in order."""
    log = fanout_dir() / "runs.log"
    lines = log.read_text().split("\n") if log.exists() else []
    return [(k, int(p)) for k, p in (line.split() for line in lines if line)]


# --------------------------------------------------------------------------------------------
# A fake ncu for the profiled sweep (live/profiled.py) on CPU Dask workers. It copies a real
# committed capture to its --export path (float64 points: h200_f64_2048, others: h200_f32_4096;
# the capture is real, not of this point's size) and prints ncu's progress lines. Controls in
# FAKE_FANOUT_DIR, by the point's capture name (its size values joined by "x", then the dtype:
# "4096x4096-float32"): ``ncu-fail-once-NAME`` / ``ncu-fail-always-NAME`` make ncu fail as it
# does when its target exits 1; ``ncu-die-once-NAME`` kills ncu's parent, the worker (a lost
# worker). Every run appends "NAME PID" (the parent's pid) to ``ncu-runs.log``.

#: ncu 2025.3.1's last line when the profiled application exits with status 1 (verbatim).
NCU_APP_FAILED = "==ERROR== The application returned an error code (1)."


def fake_sweep_ncu(folder: Path) -> Path:
    """An executable fake ncu (see the block comment above) in ``folder``."""
    here = Path(__file__).resolve().parent
    return write_fake_ncu(folder, f'exec "{sys.executable}" -c "import sys; sys.path.insert(0, \'{here}\'); '
                                  f'import fakes; fakes.sweep_ncu_main()" "$@"')


def sweep_ncu_main() -> None:
    import json
    import shutil
    import signal

    args = sys.argv[1:]
    export = Path(args[args.index("--export") + 1])
    dims = json.loads(args[args.index("--size") + 1])
    dtype = args[args.index("--dtype") + 1]
    name = "x".join(str(v) for v in dims.values()) + f"-{dtype}"
    folder = fanout_dir()
    with open(folder / "ncu-runs.log", "a") as log:
        log.write(f"{name} {os.getppid()}\n")
    print(NCU_CONNECTED, flush=True)
    for how in ("fail", "die"):
        once, always = folder / f"ncu-{how}-once-{name}", folder / f"ncu-{how}-always-{name}"
        if once.exists() or always.exists():
            if once.exists():
                once.unlink()
            if how == "die":
                os.kill(os.getppid(), signal.SIGKILL)
            print(NCU_APP_FAILED, flush=True)
            sys.exit(1)
    data = Path(__file__).resolve().parent / "data"
    src = data / ("h200_f64_2048" if dtype == "float64" else "h200_f32_4096") / "profile.ncu-rep"
    print(NCU_PROFILING, flush=True)
    shutil.copyfile(src, export.with_name(export.name + ".ncu-rep"))


def sweep_ncu_runs() -> list[tuple[str, int]]:
    """(capture name, pid of ncu's parent) of every fake sweep-ncu run so far, in order."""
    log = fanout_dir() / "ncu-runs.log"
    lines = log.read_text().split("\n") if log.exists() else []
    return [(k, int(p)) for k, p in (line.split() for line in lines if line)]
