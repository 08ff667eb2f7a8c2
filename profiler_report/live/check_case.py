"""``profiler-report check-case DIR``: a user's case folder checked offline, without a GPU.

In order: the folder loads (stages.toml parses, case.py imports and defines ``CASE``, every stage
has its block in the kernel source: :func:`~profiler_report.model.registry.load_case_folder`);
every stage (the ceiling too) compiles with NVRTC for the target architecture in every dtype of
the case, with ptxas's report of registers, spills and static shared memory per kernel; and each
stage's launch shape (``case.launch`` at the default size) fits the kernel's limits: threads per
block, block and grid dimensions, shared memory per block, registers per block. ``run --case``
does the same before it asks for the GPU.

Every problem is one line naming the file (and line, stage, dtype where there is one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from profiler_report.errors import ProfilerReportError
from profiler_report.live.cache import compile_options
from profiler_report.model.base import Case, Launch
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ALL_CXX_TYPES
from profiler_report.util.fmt import text_table
from profiler_report.util.nvrtc import EntryReport, compile_source

#: Limits of one launch on compute capability 9.0 (the CUDA C++ Programming Guide's table of
#: technical specifications): threads per block, block x/y/z, grid x/y/z, 32-bit registers per
#: block, shared memory per block (227 KB, with the opt-in above 48 KB).
MAX_THREADS = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_REGISTERS_PER_BLOCK = 65536
MAX_SHARED_PER_BLOCK = 227 * 1024


@dataclass(frozen=True)
class StageCheck:
    """One stage in one dtype: its kernel's ptxas report (None when it did not compile or NVRTC was
    not asked) and the launch shape at the default size (None when case.launch raised)."""

    stage: Stage
    dtype: str
    role: str
    entry: EntryReport | None
    launch: Launch | None


@dataclass
class CaseCheck:
    """The outcome: per stage and dtype, and one line per problem (empty: all is well)."""

    case: Case
    arch: str
    compiled: bool
    stages: list[StageCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def table(self) -> str:
        """stage, role, dtype, kernel, registers, spills, shared memory, grid, block."""
        head = ["stage", "role", "dtype", "kernel", "registers", "spill st/ld (bytes)", "smem static+dyn (bytes)",
                "grid", "block"]
        rows = []
        for s in self.stages:
            e, lc = s.entry, s.launch
            rows.append([s.stage.id, s.role, s.dtype, s.stage.kernel,
                         e.registers if e else "-", f"{e.spill_stores}/{e.spill_loads}" if e else "-",
                         f"{e.shared_bytes if e else '?'}+{lc.shared_bytes if lc else '?'}",
                         "x".join(map(str, lc.grid)) if lc else "-", "x".join(map(str, lc.block)) if lc else "-"])
        return text_table(head, rows)

    def spills(self) -> list[str]:
        """A warning line per kernel that spills (not a problem: the run still works, slower)."""
        return [f"warning: stage {s.stage.id} ({s.dtype}) spills {s.entry.spill_stores} bytes to local memory "
                f"({s.entry.registers} registers)" for s in self.stages if s.entry and s.entry.spill_stores]


def _listed(case: Case) -> list[tuple[Stage, str]]:
    m = case.manifest
    return [*((s, "stage") for s in m.stages), (m.ceiling, "ceiling"),
            *([(m.regression, "regression")] if m.regression else [])]


def check_case(case: Case, arch: str = "sm_90", compile_kernels: bool = True) -> CaseCheck:
    """Compile and shape-check every stage of a loaded case (see the module docstring).

    Raises:
        NvrtcNotFoundError: ``compile_kernels`` and no NVRTC library.
    """
    out = CaseCheck(case, arch, compile_kernels and case.compiles_cuda)
    found: dict[str, list[str]] = {}  # problem -> the dtypes it shows in: one line for all of them
    for dtype in case.dtypes:
        if not case.compiles_cuda:  # Python stages: their functions were checked when the folder loaded
            out.stages.extend(StageCheck(stage, dtype, role, None, None) for stage, role in _listed(case))
            continue
        entries = _compile(case, dtype, arch, found) if compile_kernels else {}
        for stage, role in _listed(case):
            launch = _launch(case, stage, dtype, found)
            entry = entries.get(stage.name_expression(ALL_CXX_TYPES[dtype]))
            out.stages.append(StageCheck(stage, dtype, role, entry, launch))
            faults = launch_problems(launch, entry) if launch is not None else []
            if faults:
                text = f"{case.folder / 'case.py'}: launch() for stage {stage.id}: {'; '.join(faults)}"
                found.setdefault(text, []).append(dtype)
    out.problems = [f"{text} ({', '.join(dict.fromkeys(dtypes))})" for text, dtypes in found.items()]
    return out


def _compile(case: Case, dtype: str, arch: str, found: dict[str, list[str]]) -> dict[str, EntryReport]:
    """{name expression: ptxas report} of every listed stage in ``dtype``; a failure adds its line."""
    from profiler_report.model.registry import compile_error

    names = [s.name_expression(ALL_CXX_TYPES[dtype]) for s, _ in _listed(case)]
    source = case.manifest.source
    res = compile_source(case.manifest.source_text(), str(source), names, arch, compile_options(case))
    if not res.ok:
        found.setdefault(f"{compile_error(case, res.log).message} [{arch}]", []).append(dtype)
        return {}
    entries = res.entries()
    missing = [n for n in names if res.lowered.get(n) not in entries]
    for n in missing:
        found.setdefault(f"{source}: NVRTC compiled no kernel for {n}: check its `kernel` and `template` in "
                         "stages.toml", []).append(dtype)
    return {n: entries[res.lowered[n]] for n in names if n not in missing}


def _launch(case: Case, stage: Stage, dtype: str, found: dict[str, list[str]]) -> Launch | None:
    try:
        return case.guarded("launch", stage, case.launch, stage, case.size({}), dtype)
    except ProfilerReportError as exc:
        found.setdefault(exc.message, []).append(dtype)
        return None


def launch_problems(launch: Launch, entry: EntryReport | None) -> list[str]:
    """What in ``launch`` exceeds the limits of compute capability 9.0 (``entry`` adds the
    kernel's registers and static shared memory to the per-block sums)."""
    out = []
    block = (*launch.block, 1, 1)[:3]
    grid = (*launch.grid, 1, 1)[:3]
    threads = math.prod(block)
    if len(launch.block) > 3 or len(launch.grid) > 3:
        out.append(f"grid {launch.grid} or block {launch.block} has more than 3 dimensions")
    if any(d < 1 for d in (*block, *grid)):
        out.append(f"grid {launch.grid} x block {launch.block} has an empty dimension (a size of 0?)")
    if threads > MAX_THREADS:
        out.append(f"block {launch.block} has {threads} threads, above {MAX_THREADS} per block")
    out += [f"block dimension {'xyz'[i]} = {b} is above {m}" for i, (b, m) in enumerate(zip(block, MAX_BLOCK,
                                                                                           strict=True)) if b > m]
    out += [f"grid dimension {'xyz'[i]} = {g} is above {m}" for i, (g, m) in enumerate(zip(grid, MAX_GRID,
                                                                                         strict=True)) if g > m]
    shared = launch.shared_bytes + (entry.shared_bytes if entry else 0)
    if shared > MAX_SHARED_PER_BLOCK:
        out.append(f"{shared} bytes of shared memory per block, above {MAX_SHARED_PER_BLOCK}")
    if entry is not None and entry.registers * threads > MAX_REGISTERS_PER_BLOCK:
        out.append(f"{entry.registers} registers x {threads} threads = {entry.registers * threads} per block, above "
                   f"{MAX_REGISTERS_PER_BLOCK} (add __launch_bounds__({threads}) or use smaller blocks)")
    return out


def preflight(case: Case, arch: str = "sm_90") -> CaseCheck:
    """``run --case DIR``'s first step: :func:`check_case` of a user's case before any GPU work,
    the compile left to the live run where no NVRTC library is found here.

    Raises:
        CaseError: a problem (the first one's line; ``check-case DIR`` lists them all).
    """
    from profiler_report.errors import CaseError, NvrtcNotFoundError
    from profiler_report.util.nvrtc import nvrtc_library

    try:
        nvrtc_library()
        compiled = True
    except NvrtcNotFoundError:
        compiled = False
    res = check_case(case, arch, compile_kernels=compiled)
    if res.problems:
        more = f" [{len(res.problems)} problems]" if len(res.problems) > 1 else ""
        raise CaseError(res.problems[0] + more, f"fix it; `profiler-report check-case {case.folder}` lists every "
                        "problem without a GPU")
    return res
