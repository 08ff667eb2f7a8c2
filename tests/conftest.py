"""Shared fixtures: the real H200 captures under tests/data (see tests/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
F32 = DATA / "h200_f32_4096"
F32_REGRESSED = DATA / "h200_f32_4096_regressed"
F64 = DATA / "h200_f64_2048"


def gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "skip"
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with CuPy (run on the device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def earlier(tmp_path: Path) -> Path:
    """An earlier report folder that must survive every failure."""
    dest = tmp_path / "report"
    dest.mkdir()
    (dest / "index.html").write_text("earlier report\n")
    return dest


@pytest.fixture(scope="session")
def f32_capture():
    from profiler_report.capture.ncu_rep import read_ncu_rep

    return read_ncu_rep(F32 / "profile.ncu-rep")


@pytest.fixture(scope="session")
def f32_csv_capture():
    from profiler_report.capture.csv_raw import read_csv

    return read_csv(F32 / "raw.csv")


@pytest.fixture(scope="session")
def f64_capture():
    from profiler_report.capture.ncu_rep import read_ncu_rep

    return read_ncu_rep(F64 / "profile.ncu-rep")


@pytest.fixture(scope="session")
def manifest():
    from profiler_report.cases.manifest import load_manifest

    return load_manifest()


@pytest.fixture(scope="session")
def f32_analysis(f32_capture, manifest):
    from profiler_report.analysis import analyze

    return analyze(f32_capture, manifest)


# Loaded runs shared by the gate's, the diff's and the API's tests: each capture read once a session.
@pytest.fixture(scope="session")
def good_run():
    from profiler_report.analysis.run import load_run

    return load_run(F32 / "profile.ncu-rep")


@pytest.fixture(scope="session")
def regressed_run():
    from profiler_report.analysis.run import load_run

    return load_run(F32_REGRESSED / "profile.ncu-rep")


@pytest.fixture(scope="session")
def default_thresholds():
    from profiler_report import gate

    return gate.load_thresholds(Path(__file__).resolve().parent.parent / "thresholds.toml")
