"""profile: ncu's failure modes, with fake ncu executables that print ncu 2025.3.1's real messages."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fakes import (
    NCU_CONNECTED,
    NCU_FAILED_KERNEL,
    NCU_NO_KERNELS,
    NCU_PERM,
    NCU_PROFILING,
    fake_ncu_printing,
    fake_ncu_writing,
    write_fake_ncu,
)

from profiler_report.errors import (
    CounterPermissionError,
    NcuFailedError,
    NcuNotFoundError,
    NcuTimeoutError,
    NoKernelProfiledError,
    StageNotProfiledError,
)
from profiler_report.live.ncu import (
    NcuCommand,
    check_profiled,
    classify_failure,
    export_csv,
    failed_kernels,
    find_ncu,
    ncu_version,
    run_ncu,
)


def command(ncu: Path, tmp_path: Path, **kw) -> NcuCommand:
    return NcuCommand(ncu=str(ncu), export=tmp_path / "profile", target=["true"], **kw)


def quiet(_msg: str) -> None:
    pass


# --------------------------------------------------------------------------------------------
# ncu missing


def test_ncu_missing_from_path_and_install_folders():
    with pytest.raises(NcuNotFoundError) as exc:
        find_ncu(env={}, globs=())
    assert exc.value.exit_code == 3
    assert "--ncu" in exc.value.hint


def test_empty_env_does_not_fall_back_to_the_process_path(tmp_path, monkeypatch):
    fake = write_fake_ncu(tmp_path / "bin", "exit 0")
    monkeypatch.setenv("PATH", str(fake.parent))
    with pytest.raises(NcuNotFoundError):
        find_ncu(env={}, globs=())
    assert find_ncu(env={"PATH": str(fake.parent)}, globs=()) == str(fake)


def test_explicit_ncu_that_is_not_executable(tmp_path):
    with pytest.raises(NcuNotFoundError, match="not an executable"):
        find_ncu(str(tmp_path / "ncu"))


def test_ncu_found_through_env_and_globs(tmp_path):
    fake = write_fake_ncu(tmp_path / "nsight-compute" / "2099.1.0", "exit 0")
    assert find_ncu(env={"NCU": str(fake)}, globs=()) == str(fake)
    assert find_ncu(env={}, globs=(str(tmp_path / "nsight-compute" / "*" / "ncu"),)) == str(fake)
    cuda = write_fake_ncu(tmp_path / "cuda" / "bin", "exit 0")
    assert find_ncu(env={"CUDA_HOME": str(tmp_path / "cuda")}, globs=()) == str(cuda)


# --------------------------------------------------------------------------------------------
# ncu fails


def test_counters_not_permitted(tmp_path):
    ncu = fake_ncu_printing(tmp_path, [NCU_CONNECTED, NCU_PERM], 1)
    with pytest.raises(CounterPermissionError) as exc:
        run_ncu(command(ncu, tmp_path), 30, log=quiet)
    assert exc.value.exit_code == 4
    assert "NVreg_RestrictProfilingToAdminUsers=0" in exc.value.hint
    assert "run --no-counters" in exc.value.hint


def test_nothing_profiled_names_the_filter(tmp_path):
    ncu = fake_ncu_printing(tmp_path, [NCU_CONNECTED, NCU_NO_KERNELS], 0)
    with pytest.raises(NoKernelProfiledError) as exc:
        run_ncu(command(ncu, tmp_path, ranges=["pr_naive", "pr_smem"]), 30, log=quiet)
    assert exc.value.exit_code == 5
    assert "--nvtx-include pr_naive/ --nvtx-include pr_smem/" in exc.value.message


def test_nothing_profiled_names_a_kernel_filter_too(tmp_path):
    ncu = fake_ncu_printing(tmp_path, [NCU_NO_KERNELS], 0)
    cmd = command(ncu, tmp_path, extra=["--kernel-name", "regex:transpose_nope", "--launch-count", "1"])
    with pytest.raises(NoKernelProfiledError) as exc:
        run_ncu(cmd, 30, log=quiet)
    assert "--kernel-name regex:transpose_nope" in exc.value.message


def test_ncu_exits_non_zero_part_way(tmp_path):
    ncu = fake_ncu_printing(tmp_path, [NCU_CONNECTED, NCU_PROFILING,
                                       "==ERROR== An error was reported by the driver"], 9)
    log_path = tmp_path / "ncu.log"
    with pytest.raises(NcuFailedError) as exc:
        run_ncu(command(ncu, tmp_path), 30, log=quiet, log_path=log_path)
    assert exc.value.exit_code == 6
    assert "status 9" in exc.value.message and "error was reported by the driver" in exc.value.message
    assert NCU_PROFILING in log_path.read_text()  # what ncu printed is kept
    assert not list(tmp_path.glob("*.tmp"))


def test_ncu_runs_past_its_timeout_and_is_stopped(tmp_path):
    marker = tmp_path / "still-running"
    ncu = write_fake_ncu(tmp_path, f"echo '{NCU_CONNECTED}'\nsleep 30\ntouch {marker}")
    t0 = time.monotonic()
    with pytest.raises(NcuTimeoutError) as exc:
        run_ncu(command(ncu, tmp_path), 1, log=quiet)
    assert exc.value.exit_code == 7
    assert time.monotonic() - t0 < 15
    assert "--ncu-timeout" in exc.value.hint
    time.sleep(0.2)
    assert not marker.exists()  # the whole process group was stopped


def test_version_query_stops_a_hanging_ncu_at_its_timeout(tmp_path):
    marker = tmp_path / "still-running"
    ncu = write_fake_ncu(tmp_path, f"sleep 30\ntouch {marker}")
    t0 = time.monotonic()
    assert ncu_version(str(ncu), timeout_s=0.5) == "unknown"
    assert time.monotonic() - t0 < 10  # the sleeping child held the pipe: the group must be stopped
    time.sleep(0.2)
    assert not marker.exists()


def test_version_query_reads_the_version(tmp_path):
    ncu = write_fake_ncu(tmp_path, "echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
                                   "echo 'Version 2025.3.1.0 (build 36398880) (public-release)'")
    assert ncu_version(str(ncu)) == "2025.3.1.0"


def test_progress_lines_are_echoed(tmp_path):
    ncu = fake_ncu_printing(tmp_path, [NCU_CONNECTED, NCU_PROFILING], 0)
    seen: list[str] = []
    run_ncu(command(ncu, tmp_path), 30, log=seen.append)
    assert seen == ["  profiled transpose_naive: 38 replay passes"]


def test_classification_order():
    cmd = NcuCommand(ncu="ncu", export=Path("p"), target=[])
    assert isinstance(classify_failure(1, NCU_PERM + "\n" + NCU_NO_KERNELS, cmd), CounterPermissionError)
    assert isinstance(classify_failure(0, NCU_NO_KERNELS, cmd), NoKernelProfiledError)
    assert classify_failure(0, NCU_PROFILING, cmd) is None


# --------------------------------------------------------------------------------------------
# Writers: temporary name, then rename


def test_export_csv_writes_through_a_temporary_name(tmp_path):
    ncu = write_fake_ncu(tmp_path, 'echo \'"ID","Kernel Name"\'')
    dest = tmp_path / "raw.csv"
    export_csv(str(ncu), tmp_path / "profile.ncu-rep", dest)
    assert dest.read_text().startswith('"ID"')
    assert not list(tmp_path.glob("*.tmp"))


def test_export_csv_failure_leaves_no_file(tmp_path):
    ncu = write_fake_ncu(tmp_path, "echo '==ERROR== cannot open' >&2\nexit 1")
    dest = tmp_path / "raw.csv"
    dest.write_text("earlier export\n")
    with pytest.raises(NcuFailedError):
        export_csv(str(ncu), tmp_path / "profile.ncu-rep", dest)
    assert dest.read_text() == "earlier export\n"
    assert not list(tmp_path.glob("*.tmp"))


def test_fake_ncu_scripts_are_executable(tmp_path):
    assert os.access(write_fake_ncu(tmp_path, "exit 0"), os.X_OK)


# --------------------------------------------------------------------------------------------
# A partial profile is an error (exit 5) naming the stage and its filter, never a success


REPORT = Path(__file__).parents[1] / "data" / "h200_f32_4096" / "profile.ncu-rep"  # pr_naive ... pr_copy


def _staged(tmp_path: Path, ncu: Path, stages: list[str]) -> NcuCommand:
    return command(ncu, tmp_path, ranges=[f"pr_transpose.{s}" for s in stages])


def test_failed_to_profile_with_exit_0_is_an_error_naming_stage_and_filter(tmp_path):
    ncu = fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_CONNECTED, NCU_PROFILING, NCU_FAILED_KERNEL])
    cmd = _staged(tmp_path, ncu, ["naive", "smem"])
    output = run_ncu(cmd, 30, log=quiet)  # ncu exited 0 ...
    with pytest.raises(StageNotProfiledError) as exc:  # ... but its report holds naive only
        check_profiled(cmd, ["naive", "smem"], output, ranges_of=lambda _report: ["pr_transpose.naive"])
    assert exc.value.exit_code == 5
    line = exc.value.one_line()
    assert "lacks stage smem" in line and "--nvtx-include pr_transpose.smem/" in line
    assert "Failed to profile kernel' for transpose_smem" in line
    assert "`domain@range/`" in line and "`domain@range`" in line  # push/pop and start/end forms


def test_ncu_exiting_0_without_a_report_is_an_error(tmp_path):
    ncu = fake_ncu_writing(tmp_path / "bin", None, [NCU_CONNECTED])
    cmd = _staged(tmp_path, ncu, ["naive", "smem"])
    with pytest.raises(StageNotProfiledError, match=r"wrote no report .*\(naive: --nvtx-include pr_transpose\.naive/"):
        check_profiled(cmd, ["naive", "smem"], run_ncu(cmd, 30, log=quiet))


def test_a_real_report_lacking_a_requested_stage(tmp_path):
    # The committed H200 report holds naive ... vec_colwalk and copy (legacy pr_<stage> ranges).
    ncu = fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_CONNECTED, NCU_PROFILING])
    cmd = _staged(tmp_path, ncu, ["naive", "vec_tuned", "copy"])
    output = run_ncu(cmd, 30, log=quiet)
    assert (tmp_path / "profile.ncu-rep").is_file()
    with pytest.raises(StageNotProfiledError, match=r"lacks stage vec_tuned: no launch in vec_tuned: "
                                                    r"--nvtx-include pr_transpose\.vec_tuned/"):
        check_profiled(cmd, ["naive", "vec_tuned", "copy"], output)
    check_profiled(_staged(tmp_path, ncu, ["naive", "copy"]), ["naive", "copy"], output)  # all there: no error


def test_every_stage_present_but_a_failed_launch_is_still_an_error(tmp_path):
    ncu = fake_ncu_writing(tmp_path / "bin", REPORT, [NCU_FAILED_KERNEL])
    cmd = _staged(tmp_path, ncu, ["naive"])
    with pytest.raises(StageNotProfiledError, match="failed to profile kernel transpose_smem"):
        check_profiled(cmd, ["naive"], run_ncu(cmd, 30, log=quiet))


def test_failed_kernels_are_read_from_ncus_lines():
    assert failed_kernels(f"{NCU_PROFILING}\n{NCU_FAILED_KERNEL}\n{NCU_FAILED_KERNEL}\n"
                          '==ERROR== Failed to profile "const:" in process 9') == ["transpose_smem", "const:"]
