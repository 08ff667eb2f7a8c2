"""Shared fixtures: the real H200 captures under tests/data (see tests/data/README.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"
#: The transpose's manifest (the tests of the manifest model read the flagship case's).
TRANSPOSE_STAGES = Path(__file__).resolve().parent.parent / "kernels" / "transpose" / "stages.toml"
F32 = DATA / "h200_f32_4096"
F32_REGRESSED = DATA / "h200_f32_4096_regressed"
F64 = DATA / "h200_f64_2048"


def gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "skip"
        return False


#: Test modules that are slow throughout: a browser, Dask clusters, nvcc, subprocesses of the CLI,
#: a wheel build (the marker ``slow``; ``pytest -m "not slow"`` is the quick loop).
SLOW_MODULES = {"test_browser", "test_fanout", "test_profiled", "test_kernels", "test_gpu_source", "test_packaging",
                "test_cli_errors", "test_ncu_module", "test_imports", "test_histogram_example", "test_registry",
                "test_reduction_fixture", "test_foreign", "test_load_bad"}
#: Fixtures that read a real capture (seconds per capture and worker, through ncu_report) or start Dask.
SLOW_FIXTURES = {"f32_capture", "f32_csv_capture", "f64_capture", "f32_analysis", "good_run", "regressed_run",
                 "default_thresholds", "cluster", "control", "h200_sweep"}
#: What a test's own source does that takes seconds: read or render a capture, run the CLI or a
#: subprocess, compile with nvcc, draw with matplotlib, wait for a timeout, fuzz (hypothesis).
SLOW_CALLS = ("read_once(", "load_run_once(", "load_run(", "render_capture(", "subprocess", "cli(", "_cli(", "run(",
              "nvcc", "ncu-rep", "profiler_report.load(", "load(", "CliRunner", "invoke(", "_child_read(", "exec(",
              "draw_", "timeout", "@given(")


def _does_slow_things(fn: Any) -> bool:
    import inspect

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return True  # cannot tell: the quick loop leaves it out rather than slow down
    return any(call in source for call in SLOW_CALLS)


def _is_slow(item: pytest.Item) -> bool:
    """A test is slow when its module is, when it uses a slow fixture, or when its own source or
    that of a fixture it uses calls something slow (:data:`SLOW_CALLS`)."""
    module = getattr(item, "module", None)
    if module is not None and module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
        return True
    names = set(getattr(item, "fixturenames", ()))
    if SLOW_FIXTURES & names:
        return True
    fn = getattr(item, "function", None)
    if fn is not None and _does_slow_things(fn):
        return True
    info = getattr(item, "_fixtureinfo", None)
    defs = [d for n in names for d in (info.name2fixturedefs.get(n, ()) if info else ())]
    ours = [d for d in defs if getattr(d.func, "__module__", "").startswith(("test_", "conftest"))]  # not pytest's
    return any(_does_slow_things(d.func) for d in ours)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with CuPy (run on the device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets an empty result cache of its own (live runs with fakes would otherwise read
    and write the user's ~/.cache/profiler-report, and reuse each other's results)."""
    monkeypatch.setenv("PROFILER_REPORT_CACHE", str(tmp_path_factory.mktemp("result-cache")))
    # Reads of a capture are not kept either (a pickle per read would only slow the suite):
    # tests/capture/test_parsed.py turns it back on.
    monkeypatch.setenv("PROFILER_REPORT_NO_READ_CACHE", "1")


@pytest.fixture
def earlier(tmp_path: Path) -> Path:
    """An earlier report folder that must survive every failure."""
    dest = tmp_path / "report"
    dest.mkdir()
    (dest / "index.html").write_text("earlier report\n")
    return dest


#: Captures read through :func:`read_once`, by (path, size, mtime).
_READS: dict[tuple[str, int, int], Any] = {}


def read_once(path: str | Path, pending: Any = None) -> Any:
    """``read_capture`` with each unchanged file read once a session (per xdist worker): the
    fixture captures are read-only. Errors are never cached. The reader itself is tested on
    fresh reads (test_extract*.py, the subprocess CLI tests)."""
    from profiler_report.capture.load import read_capture

    path = Path(path)
    if not path.is_file():
        return read_capture(path, pending=pending)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _READS:
        _READS[key] = read_capture(path, pending=pending)
    elif pending is not None:
        pending.close()
    return _READS[key]


def load_run_once(path: Path) -> Any:
    """``load_run`` on a capture read through :func:`read_once`."""
    from profiler_report.analysis import run as run_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run_module, "read_capture", read_once)
        return run_module.load_run(path)


@pytest.fixture(scope="session")
def f32_capture():
    return read_once(F32 / "profile.ncu-rep")


@pytest.fixture(scope="session")
def f32_csv_capture():
    from profiler_report.capture.csv_raw import read_csv

    return read_csv(F32 / "raw.csv")


@pytest.fixture(scope="session")
def f64_capture():
    return read_once(F64 / "profile.ncu-rep")


@pytest.fixture(scope="session")
def manifest():
    from profiler_report.model.manifest import load_manifest

    return load_manifest(TRANSPOSE_STAGES)


@pytest.fixture(scope="session")
def f32_analysis(f32_capture, manifest):
    from profiler_report.analysis import analyze

    return analyze(f32_capture, manifest)


# Loaded runs shared by the gate's, the diff's and the API's tests: each capture read once a session.
@pytest.fixture(scope="session")
def good_run():
    return load_run_once(F32 / "profile.ncu-rep")


@pytest.fixture(scope="session")
def regressed_run():
    return load_run_once(F32_REGRESSED / "profile.ncu-rep")


@pytest.fixture(scope="session")
def default_thresholds():
    from profiler_report import gate

    return gate.load_thresholds(Path(__file__).resolve().parent.parent / "kernels" / "transpose" / "thresholds.toml")


# The Dask tests' fixtures (live/test_fanout.py, live/test_profiled.py): the fakes' control folder
# and a LocalCluster of two worker processes, one each per test module.
@pytest.fixture(scope="module")
def control(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """FAKE_FANOUT_DIR: the folder of the fakes' controls and logs (tests/fakes.py)."""
    folder = tmp_path_factory.mktemp("fanout")
    old = os.environ.get("FAKE_FANOUT_DIR")
    os.environ["FAKE_FANOUT_DIR"] = str(folder)  # before the workers start: they inherit it
    yield folder
    if old is None:
        del os.environ["FAKE_FANOUT_DIR"]
    else:
        os.environ["FAKE_FANOUT_DIR"] = old


@pytest.fixture(scope="module")
def cluster(control: Path) -> Iterator[Any]:
    import dask
    import distributed

    # A lost worker fails its task at once (Dask's default reschedules it up to 3 times itself),
    # so the fan-out's own retry is what brings the point back.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=40) as local:
        yield local
