"""One exception root for everything the tool reports to a user.

Each error carries an exit code and a fix; the CLI prints ``error: <message> (fix: <hint>)`` on
one line and exits with the code. Every code the tool exits with, errors or not, is in
:data:`EXIT_CODE_TABLE`, the one copy of that table: ``profiler-report --help`` prints it
(:func:`exit_codes_help`) and the README's "Errors and exit codes" section repeats it.
"""

from __future__ import annotations

#: (exit code, meaning), in code order: every code the CLI exits with.
EXIT_CODE_TABLE: tuple[tuple[int, str], ...] = (
    (0, "success"),
    (1, "findings: a threshold rule failed, or a kernel variant was wrong"),
    (2, "bad input: usage, thresholds file, unreadable capture, unknown stage"),
    (3, "Nsight Compute (ncu) not found"),
    (4, "GPU performance counters not permitted (ERR_NVGPUCTRPERM)"),
    (5, "ncu profiled no kernel, or not every requested stage (the filter matched nothing)"),
    (6, "ncu exited non-zero"),
    (7, "ncu ran past its timeout"),
    (8, "no usable GPU or CuPy for a live run"),
    (9, "event timing failed: a timed call kept the GPU waiting (it synchronizes, or the host stalled)"),
    (10, "a user's case folder is broken: case.py, stages.toml, a kernel that does not compile, a raising reference"),
    (11, "compute-sanitizer not found (run --sanitize)"),
    (12, "NVRTC not found for check-case's offline compile"),
    (70, "internal error (a bug): rerun with --debug and report it"),
    (130, "interrupted (Ctrl-C)"),
)


def exit_codes_help() -> str:
    """:data:`EXIT_CODE_TABLE` as the ``Exit codes:`` epilog of ``--help`` (``\\b`` keeps click from
    rewrapping it)."""
    return "\b\nExit codes:\n" + "".join(f"  {code:<5}{meaning}\n" for code, meaning in EXIT_CODE_TABLE)


class ProfilerReportError(Exception):
    """Root of every error the CLI turns into one line and an exit code."""

    exit_code = 2
    default_hint = ""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def one_line(self) -> str:
        """``error: <message> (fix: <hint>)``, whitespace folded onto one line."""
        text = f"error: {self.message}"
        if self.hint:
            text += f" (fix: {self.hint})"
        return " ".join(text.split())


class InputError(ProfilerReportError):
    """Bad input: a file that cannot be read or parsed, an unknown stage, a bad option."""

    exit_code = 2


class ReportUnreadableError(InputError):
    """A .ncu-rep or CSV export that cannot be read."""

    default_hint = "pass a report written by `ncu --export` or a CSV from `ncu --import R --csv --page raw`"


class ThresholdsError(InputError):
    """A thresholds file that cannot be parsed, or names an unknown metric, stage or unit."""


class NcuNotFoundError(ProfilerReportError):
    """Nsight Compute's ``ncu`` is not on PATH, ``$NCU``, ``$CUDA_HOME/bin`` or the usual folders."""

    exit_code = 3
    default_hint = "install Nsight Compute, put `ncu` on PATH, or pass --ncu /path/to/ncu"


class CounterPermissionError(ProfilerReportError):
    """ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)."""

    exit_code = 4
    default_hint = (
        "run as root, or allow profiling for all users (options nvidia "
        "NVreg_RestrictProfilingToAdminUsers=0, see https://developer.nvidia.com/ERR_NVGPUCTRPERM); "
        "or use `run --no-counters` for an event-timed report without counters"
    )


class NoKernelProfiledError(ProfilerReportError):
    """ncu ran but profiled no kernel: the NVTX or kernel filter matched nothing."""

    exit_code = 5


class StageNotProfiledError(NoKernelProfiledError):
    """ncu exited 0 but a requested stage is not in its report: it printed ``Failed to profile
    kernel``, wrote no report, or the stage's NVTX filter matched nothing."""

    default_hint = ("check that the target launches each stage's kernel inside its NVTX range; ncu filters "
                    "push/pop ranges as `domain@range/` (`range/` in the default domain, as this tool writes "
                    "them) and start/end ranges as `domain@range`; ncu's messages are in ncu.log in the partial "
                    "folder")


class StagesMissingError(NoKernelProfiledError):
    """A capture of a case lacks stages between its first and last one (or ``render --stages``
    names a stage it lacks), or some of its launches are in no NVTX range of the case: the report
    is written, naming them, and the command exits 5 as a live run missing a stage does."""

    default_hint = ("render the subset on purpose with --stages ID,ID,... (the stages the capture holds), or "
                    "profile the missing stages: profiler-report run --stages ...")


class NcuFailedError(ProfilerReportError):
    """ncu exited non-zero; the message carries its last output lines."""

    exit_code = 6


class NcuTimeoutError(ProfilerReportError):
    """ncu ran past its timeout and was stopped."""

    exit_code = 7
    default_hint = "raise --ncu-timeout, or profile a smaller matrix with --profile-rows/--profile-cols"


class NoGpuError(ProfilerReportError):
    """A live run needs an NVIDIA GPU and CuPy, and found none."""

    exit_code = 8
    default_hint = (
        "run on a machine with an NVIDIA GPU and `pip install .[gpu]` (cupy, nvtx); "
        "`profiler-report render --from CAPTURE.ncu-rep` works without one"
    )


class TimingError(ProfilerReportError):
    """Event timing could not measure the GPU alone: one timed call kept the GPU waiting behind
    its hold past the timeout (live/gpu.py :func:`~profiler_report.live.gpu.event_times_us`)."""

    exit_code = 9
    default_hint = ("time calls that only queue GPU work (no synchronize, no blocking copy); on a loaded "
                    "host, rerun when it is idle")


class KernelIncorrectError(ProfilerReportError):
    """A kernel variant produced a wrong result; raised by the validator, reported per stage."""

    exit_code = 1


class CaseError(ProfilerReportError):
    """A user's case folder (``run --case DIR``) is broken: its case.py does not import or lacks
    ``CASE``, its stages.toml names a stage its kernel source lacks, a kernel does not compile
    (NVRTC's first error line is in the message), or a method of the case raised. The message
    names the file and the stage."""

    exit_code = 10


class SanitizerNotFoundError(ProfilerReportError):
    """``run --sanitize`` was asked for and no compute-sanitizer was found."""

    exit_code = 11


class NvrtcNotFoundError(ProfilerReportError):
    """No NVRTC library (libnvrtc) was found for ``check-case``'s offline compile."""

    exit_code = 12
    default_hint = ("pip install nvidia-cuda-nvrtc (the NVRTC wheel), or set CUDA_HOME to a CUDA toolkit; "
                    "`profiler-report check-case --no-compile DIR` checks the rest")
