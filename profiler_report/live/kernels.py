"""A case's kernels on the GPU: compiled with NVRTC, launched, validated, event-timed.

Everything case-specific (launch shapes, arguments, buffers, the reference and how outputs are
compared, the work model) comes from the :class:`~profiler_report.model.base.Case`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from profiler_report.live.cache import compile_options
from profiler_report.live.gpu import (
    Timing,
    compile_kernels,
    import_cupy,
    interleaved_times_us,
    memcpy_fn,
    poison,
    resident_blocks,
    timing,
)
from profiler_report.live.python_stages import adopt_result, call_function
from profiler_report.model.base import Case, Launch, Size
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ALL_CXX_TYPES

#: Key of a compiled kernel: the kernel name and its template arguments after the element type.
KernelKey = tuple[str, tuple[str, ...]]


def kernel_key(stage: Stage) -> KernelKey:
    return stage.kernel, stage.targs


def _names(case: Case, dtype: str, extra: tuple[Stage, ...] = ()) -> dict[KernelKey, str]:
    m = case.manifest
    ctype = ALL_CXX_TYPES[dtype]
    stages = [*m.stages, m.ceiling, *([m.regression] if m.regression else []), *extra]
    # A stage with no kernel (a ceiling that is a library call) has nothing to compile.
    return {kernel_key(s): s.name_expression(ctype) for s in stages if s.kernel}


def compile_module(case: Case, dtype: str, extra_options: tuple[str, ...] = (),
                   extra: tuple[Stage, ...] = ()) -> tuple[Any, dict[KernelKey, str]]:
    """Compile the case's kernel source with NVRTC for this device, with ``-lineinfo`` and the
    case's own :attr:`~profiler_report.model.base.Case.nvrtc_options`.

    ``extra`` are stages outside the manifest to instantiate too (a bench's copy kernels and
    tile shapes).

    Returns:
        (:class:`~profiler_report.live.gpu.KernelModules`, one module per kernel, compiled now;
        map kernel key -> name expression of its ``dtype`` instantiation)

    Raises:
        CaseError: a user's case does not compile (the file, line, stage and NVRTC's first error).
    """
    cupy = import_cupy()
    if not case.compiles_cuda:  # Python stages: nothing for NVRTC
        return None, {}
    names = _names(case, dtype, extra)
    try:
        module = compile_kernels(cupy, module_source(case), compile_options(case, extra_options), list(names.values()))
    except Exception as exc:
        if case.user_folder is None:
            raise
        raise _compile_failure(case, exc) from exc
    return module, names


def module_source(case: Case) -> str:
    """The text NVRTC compiles: a user's case source under ``#line 1 "<its real path>"``, so the
    line information names the file itself rather than CuPy's temporary copy: ncu's
    ``--import-source yes`` then finds and embeds it, and per-line rows carry its text. The line
    numbers stay those of the file. Built-in cases compile their source as it is."""
    text = case.manifest.source_text()
    if case.user_folder is None:
        return text
    path = str(case.manifest.source.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{path}"\n{text}'


def _compile_failure(case: Case, exc: Exception) -> Exception:
    """The one-line error of a user's case that NVRTC refused: cupy's CompileException carries the
    NVRTC log as its message; anything else (a name expression NVRTC cannot lower) is named as is."""
    from profiler_report.errors import CaseError
    from profiler_report.model.registry import compile_error

    if type(exc).__name__ == "CompileException":
        return compile_error(case, str(exc))
    return CaseError(f"{case.manifest.source}: NVRTC failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                     "check the `kernel` names and `template` arguments in stages.toml")


@dataclass
class Kernels:
    """A compiled module plus the case that knows how to launch each stage."""

    module: Any
    names: dict[KernelKey, str]
    dtype: str
    case: Case
    #: resident_blocks per (kernel key, threads, shared bytes), asked once each.
    resident: dict[tuple[KernelKey, int, int], int] = field(default_factory=dict, repr=False)
    #: Make each random input once per size and seed and hand out copies (:meth:`make_input`).
    keep_inputs: bool = False
    inputs: dict[tuple[tuple[tuple[str, int], ...], int], Any] = field(default_factory=dict, repr=False)

    def make_input(self, stage: Stage | None, size: Size, seed: int) -> Any:
        """The case's random input at ``size`` for ``seed`` (:meth:`Case.make_input`; ``stage``
        names who asked, in an error). With :attr:`keep_inputs`, made once and copied for every
        later use: a seeded generator's start is a GPU kernel of its own, which memcheck instruments
        like any other (the transpose's twelve stages took 11.3 s under memcheck with an input made
        per use, 3.2 s with one made once, on the H100). A copy, so that a stage that writes its
        input spoils no other stage's; an input that is not CuPy arrays is made every time."""
        cupy = import_cupy()

        def make() -> Any:
            return self.case.guarded("make_input", stage, self.case.make_input, cupy, size, self.dtype, seed)

        if not self.keep_inputs:
            return make()
        key = (tuple(sorted(size.items())), seed)
        if key not in self.inputs:
            self.inputs[key] = make()
        kept = self.inputs[key]
        if isinstance(kept, cupy.ndarray):
            return kept.copy()
        if isinstance(kept, tuple) and all(isinstance(v, cupy.ndarray) for v in kept):
            return tuple(v.copy() for v in kept)
        return make()

    def launch(self, stage: Stage, src: Any, dst: Any, size: Size,
               profiled: Callable[[], AbstractContextManager[Any]] = nullcontext) -> Any:
        """Run every step of ``stage`` (:meth:`Case.steps`); ``profiled()`` wraps each profiled
        launch (the target's NVTX range), or a Python stage's whole call. Returns what a Python
        stage's function returned (None for kernels)."""
        case = self.case
        result = None
        for step in case.guarded("steps", stage, case.steps, stage, src, dst, size, self.dtype):
            if step.zero is not None:
                step.zero.data.memset_async(0, step.zero.nbytes)
                continue
            if step.call is not None:
                with profiled() if step.profiled else nullcontext():
                    if step.args:  # a Python stage's function: it may return its output
                        result = call_function(case, step, self.dtype)
                    else:  # a library routine (the ceiling's cuBLAS call): writes its output
                        step.call()
                continue
            assert step.kernel is not None and step.launch is not None
            with profiled() if step.profiled else nullcontext():
                self._run(step.kernel, step.launch, step.args)
        return result

    def _run(self, kernel: Stage, shape: Launch, args: tuple[Any, ...]) -> None:
        fn = self.module.get_function(self.names[kernel_key(kernel)])
        if shape.shared_bytes > 48 * 1024:  # above 48 KB the kernel must opt in
            fn.max_dynamic_shared_size_bytes = shape.shared_bytes
        fn(self.grid(kernel, shape, fn), shape.block, args, shared_mem=shape.shared_bytes)

    def grid(self, kernel: Stage, shape: Launch, fn: Any) -> tuple[int, ...]:
        """``shape.grid``, plus ``shape.extra_blocks`` of this GPU's resident blocks where set."""
        if shape.extra_blocks is None:
            return shape.grid
        threads = math.prod(shape.block)
        key = (kernel_key(kernel), threads, shape.shared_bytes)
        if key not in self.resident:
            self.resident[key] = resident_blocks(import_cupy(), fn, threads, shape.shared_bytes)
        return (shape.grid[0] + shape.extra_blocks(self.resident[key]), *shape.grid[1:])


@dataclass
class Validation:
    """Outcome of one stage's correctness check (random input, poisoned output, compared with the
    case's reference). ``size`` holds the case's dimensions; ``first_wrong`` indexes the output."""

    stage: str
    size: Size
    dtype: str
    correct: bool
    mismatches: int = 0
    first_wrong: tuple[int, ...] | None = None
    message: str = ""
    elements: int = field(default=0, repr=False)


def validate(kernels: Kernels, stage: Stage, size: Size, seed: int = 0) -> Validation:
    """Run ``stage`` once on random input, its output poisoned (all-ones bytes) first, and compare
    it with the case's reference (``Case.compare``)."""
    cupy = import_cupy()
    case, dtype = kernels.case, kernels.dtype
    a = kernels.make_input(stage, size, seed)
    out = fresh_output(kernels, stage, size)
    result = kernels.launch(stage, a, out, size)
    if result is not None:  # a Python stage that returns its output
        adopt_result(cupy, case, stage, out, result)
    cupy.cuda.runtime.deviceSynchronize()
    ref = case.guarded("reference", stage, case.reference, cupy, stage, a)
    got = case.guarded("compare", stage, case.compare, cupy, out, ref)
    if got.ok:
        return Validation(stage.id, dict(size), dtype, True)
    where = ", ".join(str(i) for i in got.first_wrong or ())
    # A user's case names its kernel file: the stage is a block of it (or a function of stages.py).
    source = f" ({case.manifest.source})" if case.user_folder else ""
    return Validation(
        stage.id, dict(size), dtype, False, got.mismatches, got.first_wrong,
        f"stage {stage.id}{source} is wrong at {case.size_text(size)} {dtype}: {got.mismatches} of {int(out.size)} "
        f"output elements differ, first at out[{where}] (expected {got.expected}, got {got.got})",
    )


def fresh_output(kernels: Kernels, stage: Stage, size: Size) -> Any:
    """A new output for one launch of ``stage``: poisoned (all-ones bytes, so unwritten elements
    never match), then prepared by the case (an accumulating kernel's zeroed bins)."""
    cupy = import_cupy()
    case = kernels.case
    out = case.guarded("make_output", stage, case.make_output, cupy, stage, size, kernels.dtype)
    poison(cupy, out)
    case.guarded("prepare_output", stage, case.prepare_output, cupy, stage, out)
    return out


def make_pairs(case: Case, stage: Stage, size: Size, dtype: str, buffers: int) -> list[tuple[Any, Any]]:
    """``buffers`` (input, output) pairs of random inputs, rotated by the timing loop."""
    cupy = import_cupy()
    return [(case.make_input(cupy, size, dtype, seed=i + 1), case.make_output(cupy, stage, size, dtype))
            for i in range(buffers)]


def time_stages(kernels: Kernels, stages: list[Stage], size: Size, repeats: int, warmup: int,
                buffers: int) -> list[Timing]:
    """Event-time each stage, and cupy's device-to-device memcpy of the first stage's input (the
    ceiling), at one size, the entries taking turns in rounds (:func:`interleaved_times_us`). GB/s
    from the case's work model."""
    cupy = import_cupy()
    case, dtype = kernels.case, kernels.dtype
    pairs = make_pairs(case, stages[0], size, dtype, buffers)
    copies = [(src, cupy.empty_like(src)) for src, _ in pairs]
    entries: list[tuple[Any, list[tuple[Any, Any]]]] = [(memcpy_fn(cupy), copies)]
    for st in stages:
        def fn(src: Any, dst: Any, st: Stage = st) -> None:
            kernels.launch(st, src, dst, size)
        entries.append((fn, _pairs_for(case, st, pairs, size, dtype)))
    times = interleaved_times_us(entries, repeats, warmup)
    out = [timing("memcpy", times[0], size, dtype, 2 * copies[0][0].nbytes)]
    for st, us in zip(stages, times[1:], strict=True):
        work = case.guarded("work", st, case.work, st, size, dtype)
        out.append(timing(st.id, us, size, dtype, work.bytes_moved, work.flops))
    return out


def _pairs_for(case: Case, stage: Stage, pairs: list[tuple[Any, Any]], size: Size, dtype: str) -> list[tuple[Any, Any]]:
    """The timing pairs for ``stage``: the shared ones, unless its output differs in shape or
    dtype from theirs (a histogram's 256 bins against its copy ceiling's bytes): then its own."""
    cupy = import_cupy()
    mine = case.make_output(cupy, stage, size, dtype)
    if mine.shape == pairs[0][1].shape and mine.dtype == pairs[0][1].dtype:
        return pairs
    return [(src, mine if i == 0 else case.make_output(cupy, stage, size, dtype)) for i, (src, _) in enumerate(pairs)]
