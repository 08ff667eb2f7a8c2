"""doctor: each check's verdict and the exit code, with the machine's answers injected (no GPU here)."""

from __future__ import annotations

import pytest
from fakes import NCU_PERM, NCU_PROFILING

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


def machine(packages=(*CORE_PACKAGES, "cupy", "nvtx"), smi=True, ncu=True, params=PARAMS_OPEN, euid=1000,
            ncu_version="2025.3.1.0", probe_output="", probe_status=0) -> Probes:
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
                  read_text=lambda path: params, euid=lambda: euid)


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


def test_ncu_and_ncu_report_versions_that_differ_warn():
    checks = diagnose(machine(ncu_version="2026.1.0.0"))
    assert statuses(checks).get("ncu version") == "warning"
    assert exit_code(checks) == 0


def test_probe_profiles_a_tiny_kernel():
    denied = diagnose(machine(params=PARAMS_OPEN, probe_output=NCU_PERM, probe_status=1), probe=True)
    assert statuses(denied)["counter permission"] == "problem" and exit_code(denied) == 4
    allowed = diagnose(machine(params=PARAMS_RESTRICTED, probe_output=NCU_PROFILING), probe=True)
    assert statuses(allowed)["counter permission"] == "ok" and exit_code(allowed) == 0
