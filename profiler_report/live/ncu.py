"""Driving Nsight Compute: finding ``ncu``, running it on the live run's target, telling its
failure modes apart (exit codes 3-7), checking its report holds every requested stage, and
exporting CSV pages."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from profiler_report.errors import (
    CounterPermissionError,
    NcuFailedError,
    NcuNotFoundError,
    NcuTimeoutError,
    NoKernelProfiledError,
    StageNotProfiledError,
)

#: Where Nsight Compute installs itself when it is not on PATH (newest version first).
NCU_GLOBS = (
    "/usr/local/cuda/bin/ncu",
    "/usr/local/cuda-*/bin/ncu",
    "/opt/nvidia/nsight-compute/*/ncu",
    "/usr/local/NVIDIA-Nsight-Compute*/ncu",
    "/opt/cuda/bin/ncu",
)


def find_executable(name: str, env_var: str, env: dict[str, str] | None = None,
                    globs: Sequence[str] = ()) -> str | None:
    """Path of a CUDA tool: $``env_var``, then PATH, $CUDA_HOME/bin, then ``globs`` (newest
    first); None when none holds an executable ``name``. ``env`` defaults to the process
    environment; an ``env`` without PATH searches no PATH."""
    env = dict(os.environ if env is None else env)
    candidates = [env.get(env_var, "")]
    if env.get("PATH"):
        candidates.append(shutil.which(name, path=env["PATH"]) or "")
    if env.get("CUDA_HOME"):
        candidates.append(os.path.join(env["CUDA_HOME"], "bin", name))
    for pattern in globs:
        candidates.extend(sorted(glob.glob(pattern), reverse=True))
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def find_ncu(explicit: str | None = None, env: dict[str, str] | None = None,
             globs: Sequence[str] = NCU_GLOBS) -> str:
    """Path of the ``ncu`` executable: ``explicit``, then $NCU, PATH, $CUDA_HOME/bin, ``globs``.

    ``env`` defaults to the process environment; an ``env`` without PATH searches no PATH.

    Raises:
        NcuNotFoundError: none of them holds an executable ncu.
    """
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise NcuNotFoundError(f"--ncu {explicit} is not an executable file")
    found = find_executable("ncu", "NCU", env, globs)
    if found:
        return found
    where = ", ".join(globs[:3]) or "no install folder"
    raise NcuNotFoundError(f"Nsight Compute (ncu) was not found on PATH, $NCU, $CUDA_HOME/bin or in {where}")


#: ``--version`` answers already asked in this process, by executable path (a run asks it for the
#: provenance, the cache keys and each experiment: a second ncu start adds nothing).
_VERSIONS: dict[str, str] = {}


def ncu_version(ncu: str, timeout_s: float = 60) -> str:
    """:func:`_ask_version`, asked once per process and executable (a failure is asked again)."""
    if ncu not in _VERSIONS:
        found = _ask_version(ncu, timeout_s)
        if found == "unknown":
            return found
        _VERSIONS[ncu] = found
    return _VERSIONS[ncu]


def _ask_version(ncu: str, timeout_s: float = 60) -> str:
    """``ncu --version`` reduced to its version number (e.g. ``2025.3.1.0``), or the raw text;
    "unknown" when it fails or runs past ``timeout_s`` (its whole process group is then stopped:
    a child still holding the output pipe would otherwise keep the wait going)."""
    try:
        proc = subprocess.Popen([ncu, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)
    except OSError:
        return "unknown"
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return "unknown"
    m = re.search(r"Version\s+([\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1:][0] if out.strip() else "unknown"


@dataclass
class NcuCommand:
    """An ncu invocation that profiles one launch per NVTX range of ``ranges``."""

    ncu: str
    export: Path  # without the .ncu-rep suffix ncu adds
    target: list[str]
    ranges: list[str] = field(default_factory=list)
    section_set: str = "full"
    clock_control: str = "none"
    extra: list[str] = field(default_factory=list)

    def argv(self) -> list[str]:
        # section_set "": what to collect is in ``extra`` (--section/--metrics), not a set.
        cmd = [self.ncu, *(["--set", self.section_set] if self.section_set else []), "--import-source", "yes",
               "--clock-control", self.clock_control, "--force-overwrite", "--export", str(self.export)]
        if self.ranges:
            cmd.append("--nvtx")
            for r in self.ranges:
                cmd += ["--nvtx-include", f"{r}/"]
        return cmd + self.extra + self.target

    def filter_text(self) -> str:
        """The launch filters of this command as typed: NVTX ranges and ``extra`` kernel filters."""
        parts = [f"--nvtx-include {r}/" for r in self.ranges]
        args = list(self.extra)
        for i, arg in enumerate(args):
            if arg in _FILTER_OPTIONS and i + 1 < len(args):
                parts.append(f"{arg} {args[i + 1]}")
            elif arg.split("=", 1)[0] in _FILTER_OPTIONS and "=" in arg:
                parts.append(arg)
        return " ".join(parts) or "(no filter)"


#: ncu options that select which launches are profiled (named when nothing matched).
_FILTER_OPTIONS = {"-k", "--kernel-name", "--kernel-id", "--nvtx-include", "--nvtx-exclude", "-c",
                   "--launch-count", "-s", "--launch-skip", "--kernel-name-base", "--devices"}


_PROGRESS = re.compile(r'==PROF== Profiling "([^"]+)".*?(\d+) passes')


def classify_failure(returncode: int, output: str, cmd: NcuCommand) -> Exception | None:
    """The error a finished ncu run stands for, or None when it succeeded.

    Checked in order: counters not permitted (ERR_NVGPUCTRPERM), nothing profiled, non-zero exit.
    """
    tail = "\n".join(output.strip().splitlines()[-8:])
    if "ERR_NVGPUCTRPERM" in output:
        return CounterPermissionError("ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)")
    if "No kernels were profiled" in output:
        return NoKernelProfiledError(
            f"ncu profiled no kernel: the filter {cmd.filter_text()} matched nothing",
            "check that the target launches its kernels inside those NVTX ranges",
        )
    if returncode != 0:
        last = " | ".join(line.strip() for line in tail.splitlines() if line.strip())
        return NcuFailedError(f"ncu exited with status {returncode}: {last[-600:]}",
                              "see the output above; rerun with --debug for the full log")
    return None


#: ncu's line for a launch it could not profile (it may still exit 0), e.g.
#: ``==ERROR== Failed to profile kernel "gemv2N_kernel" in process 10096``.
_FAILED = re.compile(r'==ERROR== Failed to profile (?:kernel )?"([^"]*)"')


def failed_kernels(output: str) -> list[str]:
    """Kernels ncu said it failed to profile, in output order, without repeats."""
    return list(dict.fromkeys(_FAILED.findall(output)))


def check_profiled(cmd: NcuCommand, stages: Sequence[str], output: str,
                   ranges_of: Callable[[Path], list[str]] | None = None) -> None:
    """Check that ncu's report holds one launch of every stage in ``stages`` (ids whose NVTX
    ranges are ``cmd.ranges``, in the same order) after an ncu run that exited 0.

    ``ranges_of`` reads the NVTX ranges of a report's launches (default:
    :func:`~profiler_report.capture.readahead.launch_ranges`).

    Raises:
        StageNotProfiledError: ncu wrote no report, a stage has no launch in it (named with the
            filter that should have matched it), or ncu printed ``Failed to profile kernel``.
        ReportUnreadableError: the report cannot be read.
    """
    from profiler_report.capture.readahead import launch_ranges
    from profiler_report.model.ranges import own_range, parse_range

    report = cmd.export.with_name(cmd.export.name + ".ncu-rep")
    failed = failed_kernels(output)
    said = f"; ncu printed 'Failed to profile kernel' for {', '.join(failed)}" if failed else ""
    wanted = dict(zip(stages, cmd.ranges, strict=True))
    if not report.is_file():
        raise StageNotProfiledError(
            f"ncu exited 0 but wrote no report ({report}): no stage was profiled "
            f"({_stage_filters(wanted)}){said}")
    found = {own_range(r) for r in (ranges_of or launch_ranges)(report)}
    missing = {s: r for s, r in wanted.items() if parse_range(r) not in found}
    if missing:
        raise StageNotProfiledError(
            f"ncu's report {report} lacks stage{'s' if len(missing) > 1 else ''} {', '.join(missing)}: no launch "
            f"in {_stage_filters(missing)}{said}")
    if failed:
        raise StageNotProfiledError(f"ncu failed to profile kernel{'s' if len(failed) > 1 else ''} "
                                    f"{', '.join(failed)} (its report holds every stage, but not every launch)")


def _stage_filters(ranges: dict[str, str]) -> str:
    """'naive: --nvtx-include pr_transpose.naive/, ...': each stage with the filter it needed."""
    return ", ".join(f"{stage}: --nvtx-include {rng}/" for stage, rng in ranges.items())


def run_ncu(cmd: NcuCommand, timeout_s: float, log: Callable[[str], None] | None = None,
            log_path: Path | None = None) -> str:
    """Run ncu, echo progress through ``log``, return its whole output.

    Raises:
        NcuTimeoutError, CounterPermissionError, NoKernelProfiledError, NcuFailedError.
    """
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    proc = subprocess.Popen(cmd.argv(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1, start_new_session=True)
    lines: deque[str] = deque(maxlen=5000)

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            m = _PROGRESS.search(line)
            if m:
                log(f"  profiled {m.group(1)}: {m.group(2)} replay passes")
            elif "profiler-report" in line or "==ERROR==" in line or "==WARNING==" in line:
                log("  " + line.rstrip())

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise NcuTimeoutError(f"ncu ran past its {timeout_s:.0f} s timeout") from None
    except KeyboardInterrupt:
        _kill(proc)
        raise
    reader.join(timeout=5)
    output = "\n".join(lines)
    if log_path is not None:
        tmp = log_path.with_name(log_path.name + ".tmp")
        tmp.write_text(output + "\n")
        os.replace(tmp, log_path)
    err = classify_failure(proc.returncode, output, cmd)
    if err is not None:
        raise err
    return output


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def target_command(case: str, size: dict[str, int], dtype: str, stages: Sequence[str],
                   configs: dict[str, tuple[str, ...]] | None = None, validated: bool = False) -> list[str]:
    """The stage launcher as ncu's target: this Python running ``profiler_report.live.target profile``
    (``configs``: stage id -> the template arguments chosen for this shape; ``validated``: the
    caller validated every stage at this size and dtype, so the target does not again)."""
    return [sys.executable, "-m", "profiler_report.live.target", "profile", "--case", case,
            "--size", json.dumps(size, sort_keys=True), "--dtype", dtype, "--stages", ",".join(stages),
            *(["--configs", json.dumps({k: list(v) for k, v in configs.items()})] if configs else []),
            *(["--validated"] if validated else [])]


def export_csv(ncu: str, report: Path, dest: Path, page: str = "raw", timeout_s: float = 300) -> None:
    """Write ``ncu --import report --csv --page page`` to ``dest`` (temporary name, then rename)."""
    tmp = dest.with_name(dest.name + ".tmp")
    with tmp.open("w") as fh:
        res = subprocess.run([ncu, "--import", str(report), "--csv", "--page", page],
                             stdout=fh, stderr=subprocess.PIPE, text=True, timeout=timeout_s)
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise NcuFailedError(f"ncu --import {report} --csv failed: {res.stderr.strip()[-300:]}")
    os.replace(tmp, dest)
