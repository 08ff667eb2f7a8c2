"""``profiler-report doctor``: what a live run needs on this machine, one line per check with its fix.

Checks, in order: the Python packages, the GPU and its driver, the GPU packages, ncu and its
version, the ``ncu_report`` reader against that version, and counter permission. Every question
to the machine goes through :class:`Probes`, so each verdict is tested without a GPU.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from profiler_report.capture.ncu_module import PACKAGE, Reader, chosen, opens, version_key
from profiler_report.errors import CounterPermissionError, InputError, NcuNotFoundError, NoGpuError, ProfilerReportError

#: Packages the tool needs to render reports and read captures (exit 2 when missing).
CORE_PACKAGES = ("pandas", "jinja2", "matplotlib", "pygments", "click", "ncu_report")


#: Packages a live run needs (exit 8 when missing); nvtx only improves the NVTX ranges.
GPU_PACKAGES = ("cupy",)


OPTIONAL_PACKAGES = ("nvtx",)


PARAMS_FILE = "/proc/driver/nvidia/params"


@dataclass
class Check:
    """One line of the doctor's report."""

    name: str
    status: str  # "ok", "warning", "unknown", "skipped" or "problem"
    detail: str
    fix: str = ""
    exit_code: int = 0  # for a problem: the exit code of the error it stands for

    def line(self) -> str:
        tag = {"problem": "PROBLEM"}.get(self.status, self.status)
        text = f"{tag:<8} {self.name}: {self.detail}"
        return text + (f" (fix: {self.fix})" if self.fix and self.status != "ok" else "")


def _run(argv: list[str], timeout: float) -> tuple[int, str]:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except (OSError, subprocess.SubprocessError) as exc:
        return 1, str(exc)
    return res.returncode, (res.stdout + res.stderr).strip()


def _has_package(name: str) -> bool:
    """Importable? ncu_report also counts when only the copy bundled with ncu is there."""
    if name == "ncu_report":
        from profiler_report.capture.ncu_module import available

        return available()
    return importlib.util.find_spec(name) is not None


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _find_ncu() -> str:
    from profiler_report.live.ncu import find_ncu

    return find_ncu()


@dataclass
class Probes:
    """What the doctor asks the machine. Tests replace any of these."""

    has_package: Callable[[str], bool] = lambda name: _has_package(name)
    run: Callable[[list[str], float], tuple[int, str]] = _run  # (argv, timeout s) -> (exit status, output)
    find_ncu: Callable[[], str] = _find_ncu  # raises NcuNotFoundError
    read_text: Callable[[str], str | None] = _read_text  # None when unreadable
    euid: Callable[[], int] = os.geteuid
    python: str = field(default_factory=lambda: sys.executable)
    reader: Callable[[], Reader | None] = lambda: chosen()  # the ncu_report that would read captures


def check_packages(p: Probes) -> list[Check]:
    """Core packages (exit 2)."""
    core = [n for n in CORE_PACKAGES if not p.has_package(n)]
    return [Check("python packages", "problem" if core else "ok",
                  f"missing {', '.join(core)}" if core else f"{', '.join(CORE_PACKAGES)} present",
                  "pip install -e . (installs pandas, jinja2, matplotlib, pygments, click, ncu-report)",
                  InputError.exit_code)]


def check_gpu_packages(p: Probes) -> list[Check]:
    """GPU packages (exit 8), optional packages (warning). Checked after the GPU: on a machine
    without one, the GPU is what to fix first."""
    gpu = [n for n in GPU_PACKAGES if not p.has_package(n)]
    out = [Check("GPU packages", "problem" if gpu else "ok",
                 f"missing {', '.join(gpu)} (needed for a live run)" if gpu else "cupy present",
                 "pip install -e '.[gpu]' (cupy-cuda13x, nvtx)", NoGpuError.exit_code)]
    opt = [n for n in OPTIONAL_PACKAGES if not p.has_package(n)]
    if opt:
        out.append(Check("optional packages", "warning", f"missing {', '.join(opt)}: CuPy's own NVTX binding is "
                         "used instead", "pip install nvtx"))
    return out


def check_gpu(p: Probes) -> list[Check]:
    """A GPU listed by ``nvidia-smi -L`` and the driver version (both exit 8 when absent)."""
    rc, out = p.run(["nvidia-smi", "-L"], 30)
    gpus = [line.strip() for line in out.splitlines() if line.strip().startswith("GPU ")]
    if rc != 0 or not gpus:
        why = "nvidia-smi is not installed" if rc == 127 else f"nvidia-smi -L lists no GPU ({_last(out)})"
        return [Check("GPU", "problem", why, NoGpuError.default_hint, NoGpuError.exit_code)]
    checks = [Check("GPU", "ok", "; ".join(gpus[:4]) + (f" (+{len(gpus) - 4} more)" if len(gpus) > 4 else ""))]
    rc, out = p.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], 30)
    version = out.splitlines()[0].strip() if rc == 0 and out.strip() else ""
    checks.append(Check("driver", "ok" if version else "problem", version or f"version unknown ({_last(out)})",
                        "install or repair the NVIDIA driver", NoGpuError.exit_code))
    return checks


def check_ncu(p: Probes) -> tuple[list[Check], str | None, str]:
    """ncu found (exit 3 when not); returns (checks, ncu's path or None, its version or "")."""
    try:
        ncu = p.find_ncu()
    except NcuNotFoundError as exc:
        return [Check("ncu", "problem", exc.message, exc.hint, exc.exit_code)], None, ""
    rc, out = p.run([ncu, "--version"], 60)
    m = re.search(r"Version\s+([\d.]+)", out)
    if rc != 0 or not m:
        return [Check("ncu", "problem", f"{ncu} does not run ({_last(out)})",
                      "reinstall Nsight Compute or pass --ncu", NcuNotFoundError.exit_code)], ncu, ""
    return [Check("ncu", "ok", f"{ncu}, version {m.group(1)}")], ncu, m.group(1)


def check_reader(p: Probes, ncu_version: str) -> Check:
    """The ncu_report that reads captures (:func:`profiler_report.capture.ncu_module.chosen`)
    against the local ncu: a reader opens captures of its own release and older ones, so an ncu
    newer than the reader writes captures it cannot open (exit 2, as reading one would)."""
    reader = p.reader()
    if reader is None:
        return Check("capture reader", "problem", "no ncu_report module: captures cannot be read",
                     f"pip install -U {PACKAGE}", InputError.exit_code)
    if not ncu_version:
        return Check("capture reader", "ok", f"{reader.describe()}; no local ncu to compare it with")
    verdict = opens(reader.version, ncu_version)
    if verdict is None:
        return Check("capture reader", "warning", f"{reader.describe()}, local ncu {ncu_version}: cannot compare "
                     "the versions", f"pip install -U {PACKAGE}")
    if verdict:
        return Check("capture reader", "ok", f"{reader.describe()} opens captures of the local ncu {ncu_version}")
    need = ".".join(str(n) for n in version_key(ncu_version)[:2])
    return Check("capture reader", "problem", f"{reader.describe()} is older than the local ncu {ncu_version}: "
                 "it cannot open the captures that ncu writes",
                 f"pip install -U '{PACKAGE}>={need}' (or make the ncu_report in that ncu's extras/python importable)",
                 InputError.exit_code)


def counter_permission(p: Probes, driver: bool = True) -> Check:
    """Whether this user may read the GPU performance counters, from the driver's parameters.

    ``RmProfilingAdminOnly: 1`` in /proc/driver/nvidia/params (the module option
    NVreg_RestrictProfilingToAdminUsers) restricts counters to root/CAP_SYS_ADMIN. 'skipped'
    without an NVIDIA driver (``driver`` False and no parameters file: no counters to read),
    'unknown' when the file cannot be read; ``doctor --probe`` profiles a tiny kernel to know for sure.
    """
    hint = CounterPermissionError.default_hint
    text = p.read_text(PARAMS_FILE)
    m = re.search(r"RmProfilingAdminOnly:\s*(\d+)", text or "")
    root = p.euid() == 0
    if m and m.group(1) == "0":
        return Check("counter permission", "ok", "RmProfilingAdminOnly: 0 (every user may profile)")
    if m and not root:
        return Check("counter permission", "problem", "RmProfilingAdminOnly: 1 and not running as root "
                     "(ncu would fail with ERR_NVGPUCTRPERM)", hint, CounterPermissionError.exit_code)
    if not m and not driver:
        return Check("counter permission", "skipped", f"no NVIDIA driver here ({PARAMS_FILE} not readable): "
                     "no counters to read")
    if root:
        return Check("counter permission", "ok", "running as root (in a container the host can still forbid "
                     "counters: `doctor --probe` checks)")
    return Check("counter permission", "unknown", f"cannot tell: {PARAMS_FILE} is not readable",
                 "run `profiler-report doctor --probe`, which profiles a tiny kernel")


#: A tiny CUDA kernel launched through CuPy, the target of the counter probe.
PROBE_TARGET = ("import cupy; k = cupy.RawKernel('extern \"C\" __global__ void k(float* a){a[threadIdx.x]+=1;}', 'k'); "
                "a = cupy.zeros(32, dtype=cupy.float32); k((1,), (32,), (a,)); cupy.cuda.runtime.deviceSynchronize()")


def probe_counters(p: Probes, ncu: str) -> Check:
    """Profile a tiny kernel with ncu: the one sure test of counter permission."""
    from profiler_report.live.ncu import NcuCommand, classify_failure

    cmd = [ncu, "--metrics", "gpu__time_duration.sum", p.python, "-c", PROBE_TARGET]
    rc, out = p.run(cmd, 300)
    err = classify_failure(rc, out, NcuCommand(ncu=ncu, export=Path("probe"), target=[]))
    if err is None:
        return Check("counter permission", "ok", "ncu profiled a test kernel")
    if isinstance(err, ProfilerReportError):
        status = "problem" if isinstance(err, CounterPermissionError) else "unknown"
        return Check("counter permission", status, f"probe: {err.message}", err.hint,
                     err.exit_code if status == "problem" else 0)
    return Check("counter permission", "unknown", f"probe failed ({_last(out)})")


def diagnose(p: Probes | None = None, probe: bool = False) -> list[Check]:
    """Every check, in order (the first problem is the one to fix first)."""
    p = p or Probes()
    checks = check_packages(p)
    gpu = check_gpu(p)
    driver = all(c.status == "ok" for c in gpu)
    checks += gpu
    checks += check_gpu_packages(p)
    ncu_checks, ncu, ncu_version = check_ncu(p)
    checks += ncu_checks
    checks.append(check_reader(p, ncu_version))
    has_cupy = p.has_package("cupy")
    if probe and ncu and driver and has_cupy:
        checks.append(probe_counters(p, ncu))
        return checks
    checks.append(counter_permission(p, driver))
    if probe:
        why, first = (("ncu not found", "install Nsight Compute") if not ncu else
                      ("no GPU", "run on a machine with an NVIDIA GPU") if not driver else
                      ("no CuPy to launch the test kernel", "pip install -e '.[gpu]'"))
        checks.append(Check("counter probe", "skipped", f"--probe did not run: {why}",
                            f"{first}, then run `profiler-report doctor --probe` again"))
    return checks


def exit_code(checks: list[Check]) -> int:
    """0 when nothing blocks a live run, else the exit code of the first problem."""
    for c in checks:
        if c.status == "problem":
            return c.exit_code or 1
    return 0


def summary_line(checks: list[Check]) -> str:
    first = next((c for c in checks if c.status == "problem"), None)
    if first is None:
        return "ok: a live run (`profiler-report run`) can work here"
    extra = " (or `run --no-counters` for an event-timed report)" if first.exit_code == 4 else ""
    return f"a live run cannot work yet: fix '{first.name}' first{extra}; exit status {exit_code(checks)}"


def counters_off_reason(p: Probes | None = None) -> str:
    """Why a run has no counters: 'permission' when this machine restricts them, else '--no-counters'."""
    check = counter_permission(p or Probes())
    return "permission" if check.status == "problem" else "--no-counters"


def _last(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"
