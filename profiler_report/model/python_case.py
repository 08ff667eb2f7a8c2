"""Python stages: a case whose stages are functions of ``stages.py`` (PyTorch, Triton, CuPy ...).

A Python ladder's folder holds ``stages.toml`` (``source = "stages.py"``; each ``[[stage]]``, the
``[ceiling]`` and each ``[[peer]]`` name their ``function``), ``stages.py`` and ``case.py``, whose
case subclasses :class:`PythonCase`. A stage's function is called as ``fn(inputs, output)``: it
writes the output, or returns it (the tool copies a returned value into the poisoned output for
validation only; timing and profiling call the function alone). What it receives is
:attr:`PythonCase.array`: ``torch`` tensors (DLPack views of the tool's CuPy buffers, no copy) or
the ``cupy`` arrays themselves.

Compilation, autotuning and warm-up happen in the calls before the profiled one (validation and
warm-up, outside every NVTX range); ncu profiles exactly one call of each stage, every kernel
it launches inside ``pr_<case>.<stage>``.

This module never imports stages.py's libraries: the source the report shows comes from its
syntax tree (:func:`function_source`), so a CPU machine renders a Python ladder's report.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from profiler_report.errors import CaseError, InputError
from profiler_report.model.base import Case, Size, Step
from profiler_report.model.manifest import Manifest, Stage


def top_level(text: str, path: Path | str = "stages.py") -> dict[str, ast.stmt]:
    """Name -> the top-level ``def`` (decorators included) or simple assignment defining it.

    Raises:
        CaseError: the file does not parse (its line and the error).
    """
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise CaseError(f"{path}:{exc.lineno}: stages.py does not parse: {exc.msg}", "fix the syntax error") from exc
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
    return out


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def function_source(text: str, name: str) -> str:
    """The source of top-level function ``name`` of ``text``, after the top-level definitions it
    uses (transitively: the ``@triton.jit`` kernel a launcher calls, a ``torch.compile``'d
    global), each once, in file order. "" when ``name`` is not defined there."""
    defs = top_level(text)
    if name not in defs:
        return ""
    wanted: list[ast.stmt] = []
    todo = [defs[name]]
    while todo:
        node = todo.pop()
        if any(node is w for w in wanted):
            continue
        wanted.append(node)
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        todo += [defs[u] for u in sorted(used) if u in defs and defs[u] is not node]
    lines = text.splitlines()
    parts = [(_first_line(n), n.end_lineno or n.lineno) for n in wanted]
    return "\n\n".join("\n".join(lines[a - 1:b]) for a, b in sorted(set(parts)))


def listed(manifest: Manifest) -> list[Stage]:
    """Every entry of a manifest that runs: the stages, the ceiling, the regression, the peers."""
    return [*manifest.stages, manifest.ceiling, *([manifest.regression] if manifest.regression else []),
            *manifest.peers]


def check_python_sources(case: Case, manifest: Manifest) -> None:
    """Every stage, the ceiling and every peer of ``manifest`` names a ``function`` that
    ``stages.py`` defines at its top level (read as a syntax tree: nothing is imported).

    Raises:
        CaseError: stages.py is missing or does not parse, an entry names no function, or the
            function is not defined there.
    """
    toml = case.folder / "stages.toml"
    try:
        text = manifest.source_text()
    except OSError as exc:
        raise CaseError(f"{toml}: source {manifest.source.name} cannot be read ({exc.strerror})",
                        "set `source` in stages.toml to the Python file of the stage functions") from exc
    defs = top_level(text, manifest.source)
    for st in listed(manifest):
        if not st.function:
            raise CaseError(f"{toml}: stage {st.id} names no function (a Python ladder's stages are functions)",
                            f"add function = \"NAME\" to stage {st.id}: a function of {manifest.source.name}")
        if not isinstance(defs.get(st.function), ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign):
            raise CaseError(f"{manifest.source}: no top-level function {st.function} for stage {st.id} of {toml}",
                            f"define `def {st.function}(inputs, output)` in {manifest.source.name}, or fix "
                            "`function` in stages.toml")


class PythonCase(Case):
    """A case whose stages are Python callables (see the module docstring).

    A subclass sets the case's attributes and implements :meth:`work`, :meth:`make_input`,
    :meth:`make_output`, :meth:`reference` and :meth:`compare` as any case does (buffers are
    CuPy arrays; bfloat16 ones hold uint16 words: :mod:`profiler_report.util.tensors`); it
    needs no launch shapes nor kernel arguments (:meth:`launch` stays unimplemented: its kernels
    choose their own).

    Attributes:
        array: what a stage function receives: "torch" (tensors of the run's dtype) or "cupy".
    """

    array: str = "torch"
    #: Memory-bound ladders of whole operations: launches, DRAM bytes, sectors, occupancy (no
    #: shared-memory bank figures: a subclass adds them where its kernels use shared memory).
    summary_columns = ("event_gbps", "pct_of_memcpy", "launches", "duration_us", "dram_read_bytes",
                       "dram_write_bytes", "global_load_efficiency_pct", "achieved_occupancy_pct",
                       "registers_per_thread")
    stage_metrics = ("event_gbps", "pct_of_memcpy", "launches", "duration_us", "dram_read_bytes", "dram_write_bytes",
                     "dram_throughput_gbps", "global_load_efficiency_pct", "global_store_efficiency_pct",
                     "global_load_sectors_per_request", "global_store_sectors_per_request", "l2_hit_rate_pct",
                     "achieved_occupancy_pct", "registers_per_thread", "instructions_executed")
    source_language = "python"
    compiles_cuda = False
    bench_module = "profiler_report.live.python_bench"

    @property
    def has_peers(self) -> bool:
        """Whether stages.toml lists ``[[peer]]`` functions to time beside the stages."""
        return bool(self.manifest.peers)

    def steps(self, stage: Stage, inputs: Any, output: Any, size: Size, dtype: str) -> list[Step]:
        """One step: the stage's function, called with the input and the output."""
        return [Step(stage, args=(inputs, output), call=self.function(stage))]

    def function(self, stage: Stage) -> Callable[..., Any]:
        """The function of ``stage`` in stages.py (imported on first use, in GPU processes only).

        Raises:
            CaseError: stages.py does not import, or lacks the function.
        """
        fn = getattr(self._module, stage.function, None)
        if not callable(fn):
            raise CaseError(f"{self.manifest.source}: {stage.function} (stage {stage.id}) is not a function",
                            f"define `def {stage.function}(inputs, output)` in {self.manifest.source.name}")
        return fn

    @cached_property
    def _module(self) -> Any:
        """stages.py imported as a module of its own (named after its path)."""
        path = self.manifest.source.resolve()
        name = f"profiler_report_user_stages_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CaseError(f"{path} cannot be imported", "check the file is a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # triton.jit and pickling look the module up by name
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            text = " ".join(str(exc).split())[:300]
            raise CaseError(f"{path}: stages.py does not import: {type(exc).__name__}: {text}",
                            "fix stages.py (rerun with --debug for the traceback)") from exc
        return module

    def stage_sources(self) -> dict[str, str]:
        """Stage id -> its function's source and the top-level definitions it uses (the Triton
        kernel it launches), from stages.py's syntax tree (:func:`function_source`)."""
        text = self.manifest.source_text()
        return {st.id: function_source(text, st.function) for st in listed(self.manifest) if st.function}

    def normalize_source(self, source: str, stage_id: str) -> str:
        """The stage's function named ``stage`` in its ``def`` line, so the diff from the previous
        stage shows the change, not the new name."""
        try:
            fn = self.manifest.stage(stage_id).function
        except InputError:  # a peer or an unknown id: nothing to rename
            return source
        return source.replace(f"def {fn}(", "def stage(", 1) if fn else source
