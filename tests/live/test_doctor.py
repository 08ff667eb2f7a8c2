"""doctor: each check's verdict and the exit code, with the machine's answers injected (no GPU here)."""

from __future__ import annotations

import pytest
from fakes import NCU_PERM, NCU_PROFILING

from profiler_report.capture.ncu_module import Reader
from profiler_report.errors import NcuNotFoundError
from profiler_report.live.doctor import (
    CORE_PACKAGES,
    Probes,
    counter_permission,
    counters_off_reason,
    diagnose,
    exit_code,
    summary_line,
)

SMI_L = "GPU 0: NVIDIA H200 (UUID: GPU-test)"
PARAMS_RESTRICTED = "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableMSI: 1\n"
PARAMS_OPEN = "RmProfilingAdminOnly: 0\n"
PACKAGE_READER = Reader("2026.3.1", "ncu-report package")


def machine(packages=(*CORE_PACKAGES, "cupy", "nvtx"), smi=True, ncu=True, params=PARAMS_OPEN, euid=1000,
            ncu_version="2025.3.1.0", probe_output="", probe_status=0,
            reader=PACKAGE_READER) -> Probes:
    """Probes answering like a machine with the given parts."""

    def run(argv, timeout):
        if argv[0] == "nvidia-smi":
            if not smi:
                return 127, "nvidia-smi: not found"
            return (0, SMI_L) if argv[1] == "-L" else (0, "580.95.05")
        if argv[1:] == ["--version"]:
            return 0, f"NVIDIA (R) Nsight Compute Command Line Profiler\nVersion {ncu_version} (build 1)"
        return probe_status, probe_output

    def find_ncu():
        if not ncu:
            raise NcuNotFoundError("Nsight Compute (ncu) was not found")
        return "/opt/nvidia/nsight-compute/2025.3.1/ncu"

    return Probes(has_package=lambda n: n in packages, run=run, find_ncu=find_ncu,
                  read_text=lambda path: params, euid=lambda: euid, reader=lambda: reader)


def statuses(checks):
    return {c.name: c.status for c in checks}


def test_all_good_exits_0():
    checks = diagnose(machine())
    assert exit_code(checks) == 0
    assert all(c.status == "ok" for c in checks), [c.line() for c in checks]
    assert summary_line(checks).startswith("ok")


@pytest.mark.parametrize("kw, failing, code", [
    ({"packages": ("click",)}, "python packages", 2),
    ({"packages": CORE_PACKAGES}, "GPU packages", 8),
    ({"smi": False}, "GPU", 8),
    ({"ncu": False}, "ncu", 3),
    ({"params": PARAMS_RESTRICTED}, "counter permission", 4),
])
def test_first_blocking_problem_sets_the_exit_code(kw, failing, code):
    checks = diagnose(machine(**kw))
    assert statuses(checks)[failing] == "problem"
    assert exit_code(checks) == code
    first = next(c for c in checks if c.status == "problem")
    assert first.name == failing and first.fix  # says what to fix
    assert "\n" not in first.line()


def test_problems_are_reported_in_check_order():
    checks = diagnose(machine(smi=False, ncu=False, params=PARAMS_RESTRICTED))
    assert exit_code(checks) == 8  # the GPU comes before ncu and the counters


def test_counter_permission_suggests_the_degraded_run():
    checks = diagnose(machine(params=PARAMS_RESTRICTED))
    assert "run --no-counters" in summary_line(checks)
    assert "NVreg_RestrictProfilingToAdminUsers=0" in next(c for c in checks if c.status == "problem").fix


def test_counter_permission_cases():
    assert counter_permission(machine(params=PARAMS_OPEN)).status == "ok"
    assert counter_permission(machine(params=PARAMS_RESTRICTED, euid=0)).status == "ok"
    assert counter_permission(machine(params=PARAMS_RESTRICTED)).status == "problem"
    unknown = counter_permission(machine(params=None))
    assert unknown.status == "unknown" and "--probe" in unknown.fix
    assert exit_code([unknown]) == 0  # cannot tell: not blocking


def test_counters_off_reason():
    assert counters_off_reason(machine(params=PARAMS_RESTRICTED)) == "permission"
    assert counters_off_reason(machine(params=PARAMS_OPEN)) == "--no-counters"


def test_optional_nvtx_is_a_warning_only():
    checks = diagnose(machine(packages=(*CORE_PACKAGES, "cupy")))
    assert statuses(checks)["optional packages"] == "warning"
    assert exit_code(checks) == 0


def by_name(checks, name):
    return next(c for c in checks if c.name == name)


@pytest.mark.parametrize("ncu_version", ["2025.1.0.0", "2025.3.1.0", "2026.3.1.0"])
def test_a_reader_as_new_as_ncu_opens_its_captures_and_both_versions_are_named(ncu_version):
    checks = diagnose(machine(ncu_version=ncu_version))
    reader = by_name(checks, "capture reader")
    assert reader.status == "ok" and exit_code(checks) == 0
    assert "ncu_report 2026.3.1 (ncu-report package)" in reader.detail and ncu_version in reader.detail


def test_an_ncu_newer_than_the_reader_is_a_one_line_problem_with_the_fix_exit_2():
    checks = diagnose(machine(ncu_version="2027.1.0.0"))
    reader = by_name(checks, "capture reader")
    assert reader.status == "problem" and exit_code(checks) == 2
    assert "2026.3.1" in reader.detail and "2027.1.0.0" in reader.detail
    assert "pip install -U 'ncu-report>=2027.1'" in reader.fix
    assert "\n" not in reader.line()


def test_a_bundled_reader_is_named_with_its_folder():
    bundled = Reader("2027.1.0", "bundled with ncu in /opt/nvidia/nsight-compute/2027.1.0/extras/python",
                     "/opt/nvidia/nsight-compute/2027.1.0/extras/python")
    reader = by_name(diagnose(machine(ncu_version="2027.1.0.0", reader=bundled)), "capture reader")
    assert reader.status == "ok" and "bundled with ncu in /opt/nvidia" in reader.detail


def test_no_reader_at_all_is_a_problem():
    checks = diagnose(machine(packages=("pandas", "cupy", "nvtx"), reader=None))
    assert by_name(checks, "capture reader").status == "problem" and exit_code(checks) == 2


def test_no_driver_skips_the_counter_permission_even_as_root():
    checks = diagnose(machine(smi=False, params=None, euid=0, packages=CORE_PACKAGES))
    counters = by_name(checks, "counter permission")
    assert counters.status == "skipped" and "no NVIDIA driver" in counters.detail
    assert "running as root" not in counters.line()


def test_no_gpu_at_all_names_the_gpu_first_not_its_packages():
    checks = diagnose(machine(smi=False, params=None, packages=CORE_PACKAGES))
    assert statuses(checks)["GPU packages"] == "problem"  # still listed
    assert "fix 'GPU' first" in summary_line(checks)
    assert exit_code(checks) == 8


@pytest.mark.parametrize("kw, why", [
    ({"ncu": False}, "ncu not found"),
    ({"smi": False, "params": None}, "no GPU"),
    ({"packages": CORE_PACKAGES}, "no CuPy"),
])
def test_probe_that_cannot_run_says_it_was_skipped(kw, why):
    checks = diagnose(machine(**kw), probe=True)
    probe = by_name(checks, "counter probe")
    assert probe.status == "skipped" and why in probe.detail and "--probe" in probe.line()


def test_probe_profiles_a_tiny_kernel():
    denied = diagnose(machine(params=PARAMS_OPEN, probe_output=NCU_PERM, probe_status=1), probe=True)
    assert statuses(denied)["counter permission"] == "problem" and exit_code(denied) == 4
    allowed = diagnose(machine(params=PARAMS_RESTRICTED, probe_output=NCU_PROFILING), probe=True)
    assert statuses(allowed)["counter permission"] == "ok" and exit_code(allowed) == 0
