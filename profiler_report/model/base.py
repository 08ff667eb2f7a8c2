"""The case seam: what the generic pipeline asks of one kernel ladder.

The pipeline never names a case's kernels, shapes or arrays: it asks the :class:`Case` for them.
A size is a dict of the case's dimensions (``{"rows": 8192, "cols": 8192}`` for the transpose,
``{"n": 268435456}`` for a reduction). Arrays are CuPy arrays; the GPU-side methods are only
called on a machine with a GPU, by :mod:`profiler_report.live`.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from profiler_report.errors import CaseError, InputError, ProfilerReportError
from profiler_report.model.experiment import Experiment
from profiler_report.model.manifest import Manifest, Stage, load_manifest, stage_sources
from profiler_report.util.dtypes import DTYPES
from profiler_report.util.resources import resource_dir

Size = dict[str, int]


@dataclass(frozen=True)
class Work:
    """What one launch moves and computes: the denominator of GB/s and TFLOP/s.

    ``bytes_moved`` counts bytes read plus bytes written (the work model, not what the hardware
    moved: ncu's DRAM bytes say that); ``flops`` is 0 for pure data movement. A case whose
    :attr:`Case.work_unit` is "TFLOP/s" is timed in ``flops`` (event-timed TFLOP/s).
    """

    bytes_moved: int
    flops: int = 0


@dataclass(frozen=True)
class Launch:
    """Grid and block of one launch, and its dynamic shared memory in bytes.

    ``extra_blocks``, where set, takes the blocks the GPU holds at once for this launch (its SMs x
    the occupancy API's blocks per SM: :func:`profiler_report.live.gpu.resident_blocks`) and gives
    the blocks to add to ``grid[0]``: a kernel that sizes its last wave to the GPU (the transpose's
    ``vec_realigned`` splits the tail's tiles). None: the grid as it is.
    """

    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int = 0
    extra_blocks: Callable[[int], int] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Step:
    """One GPU operation of a stage's launch sequence (:meth:`Case.steps`).

    A kernel launch of ``kernel``'s instantiation (a stage of the manifest: its kernel and
    template arguments) with ``launch`` and ``args``; or, when ``zero`` is set, a
    ``cudaMemsetAsync`` of that CuPy array to zero bytes. ``profiled`` marks the launch ncu
    profiles (the NVTX range wraps it); the others (a reduction's finishing passes, a memset)
    run outside the range but inside the event timing. When ``call`` is set, the step is that
    call instead of a kernel of the case's source: with no ``args``, a library routine (cuBLAS
    through CuPy) that a ceiling stage with an empty ``kernel`` runs; with ``args`` (the input and
    the output), a Python stage's function (:class:`~profiler_report.model.python_case.PythonCase`);
    ``profiled`` wraps it like a launch.
    """

    kernel: Stage | None = None
    launch: Launch | None = None
    args: tuple[Any, ...] = ()
    profiled: bool = True
    zero: Any = None
    call: Callable[..., Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Comparison:
    """How one output compared with its reference: ``ok``, how many elements differ, where the
    first one is (an index into the output) and what was expected and found there."""

    ok: bool
    mismatches: int = 0
    first_wrong: tuple[int, ...] | None = None
    expected: str = ""
    got: str = ""


class Case:
    """One kernel ladder. Subclasses set the class attributes and implement the GPU methods.

    Attributes:
        name: registry name, also the folder ``kernels/<name>/``.
        title: how the report names the case.
        dims: the size's dimensions, in order (``("rows", "cols")``).
        default_size: the size ``run`` times at without options.
        compare_text: how outputs are compared, for the report ("bit-exact against ...", or the
            tolerance and why).
        validation_text: how each stage is validated (input, poisoning, comparison).
        summary_columns: the headline columns (metrics.py names) of the report's summary table.
        stage_metrics: the rows of each stage's "metrics that moved" table.
        dtypes: the element types the case runs in (``--dtype``); the first is the default.
    """

    name: str = ""
    title: str = ""
    dims: tuple[str, ...] = ()
    default_size: Size = {}  # noqa: RUF012 (class-level constant, never mutated)
    compare_text: str = ""
    validation_text: str = ""
    summary_columns: tuple[str, ...] = (
        "event_gbps", "pct_of_memcpy", "duration_us", "shared_excessive_wavefronts", "shared_wavefronts_per_load",
        "shared_wavefronts_per_store", "global_load_efficiency_pct", "global_store_efficiency_pct",
        "global_store_sectors_per_request", "achieved_occupancy_pct",
    )
    stage_metrics: tuple[str, ...] = (
        "event_gbps", "pct_of_memcpy", "duration_us", "dram_throughput_gbps", "shared_wavefronts_per_load",
        "shared_wavefronts_per_store", "shared_excessive_wavefronts", "global_load_efficiency_pct",
        "global_store_efficiency_pct", "global_load_sectors_per_request", "global_store_sectors_per_request",
        "l2_excessive_sectors", "achieved_occupancy_pct", "registers_per_thread", "shared_mem_per_block_bytes",
    )
    dtypes: tuple[str, ...] = DTYPES
    #: How the case's speed is read: "GB/s" (bytes moved, the memory cases) or "TFLOP/s" (floating-
    #: point operations of its :class:`Work`, a compute-bound case such as a matrix multiply).
    work_unit: str = "GB/s"
    #: The ``launch`` values its stages.toml may use (what :meth:`launch` knows); () for any.
    launch_kinds: tuple[str, ...] = ()
    #: A user's case folder (set by :func:`profiler_report.model.registry.load_case_folder`); None
    #: for a built-in case, whose files are the packaged ``kernels/<name>/``.
    user_folder: Path | None = None
    #: The language of the stages' source, for its highlighting and diffs ("cuda" or "python").
    source_language: str = "cuda"
    #: Whether the stages are CUDA kernels of the manifest's source, compiled with NVRTC (a
    #: Python case's stages are functions: nothing to compile).
    compiles_cuda: bool = True
    #: NVRTC options the case's source needs beyond the tool's own (``live.cache.COMPILE_OPTIONS``):
    #: ``("-arch=sm_90a",)`` for wgmma, which only the architecture-specific target has. Part of
    #: every compile (live runs, ``check-case``) and of the result cache's key.
    nvrtc_options: tuple[str, ...] = ()

    # -- files --------------------------------------------------------------------------------

    @property
    def folder(self) -> Path:
        """The case's files (the manifest, the kernel source, the default thresholds): a user's
        case folder, else the packaged ``kernels/<name>/``."""
        return self.user_folder or resource_dir("kernels") / self.name

    @property
    def ref(self) -> str:
        """What :func:`profiler_report.model.registry.get_case` takes to load this case again (in the ncu
        target process too): the built-in name, or the folder's absolute path."""
        return str(self.user_folder) if self.user_folder else self.name

    @property
    def default_dtype(self) -> str:
        """The dtype a run uses without ``--dtype``: float32 where the case runs in it."""
        return "float32" if "float32" in self.dtypes else self.dtypes[0]

    def check_dtype(self, dtype: str) -> str:
        """``dtype`` when the case runs in it.

        Raises:
            InputError: the case does not run in ``dtype``.
        """
        if dtype not in self.dtypes:
            raise InputError(f"case {self.name} does not run in {dtype}", f"use --dtype {' or '.join(self.dtypes)}")
        return dtype

    @property
    def has_peers(self) -> bool:
        """Whether the case times peer libraries (it names a :attr:`bench_module` or overrides :meth:`bench_at`)."""
        return bool(self.bench_module) or type(self).bench_at is not Case.bench_at

    def guarded(self, method: str, stage: Stage | None, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, one of this case's methods; in a user's case an exception it raises
        becomes a :class:`CaseError` naming case.py's line, the method and the stage.

        Raises:
            CaseError: a user's case method raised or exited (built-in cases' exceptions pass
                through: there they are bugs of the tool, exit 70); Ctrl-C passes through.
        """
        if self.user_folder is None:
            return fn(*args)
        try:
            return fn(*args)
        except (ProfilerReportError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # an exit too: sys.exit(0) in a method must not pass for success
            where = _frame_in(exc, self.user_folder) or str(self.user_folder / "case.py")
            text = " ".join(str(exc).split())[:300]
            for_stage = f" for stage {stage.id}" if stage is not None else ""
            raise CaseError(f"{where}: {method}(){for_stage} raised {type(exc).__name__}: {text}",
                            f"fix {method}() in case.py (rerun with --debug for the traceback)") from exc

    @cached_property
    def manifest(self) -> Manifest:
        """The case's ``stages.toml``, read once per process.

        Raises:
            InputError: the manifest is missing or malformed, or a stage's ``launch`` is none of
                :attr:`launch_kinds`.
        """
        path = self.folder / "stages.toml"
        manifest = load_manifest(path)
        for st in (*manifest.stages, manifest.ceiling, *([manifest.regression] if manifest.regression else [])):
            if self.launch_kinds and st.launch not in self.launch_kinds:
                raise InputError(f"{path}: stage {st.id}: unknown launch {st.launch!r}",
                                 f"set launch to one of {', '.join(self.launch_kinds)}")
        return manifest

    def thresholds(self) -> Path | None:
        """The case's default thresholds file (``kernels/<name>/thresholds.toml``), if any."""
        path = self.folder / "thresholds.toml"
        return path if path.is_file() else None

    # -- sizes and work -------------------------------------------------------------------------

    def size(self, values: Mapping[str, int | None]) -> Size:
        """A size from options (missing ones from :attr:`default_size`), checked.

        Raises:
            InputError: a dimension is not a positive integer, or unknown.
        """
        unknown = set(values) - set(self.dims)
        if unknown:
            raise InputError(f"case {self.name} has no dimension {', '.join(sorted(unknown))}",
                             f"its dimensions are {', '.join(self.dims)}")
        given = {d: v for d, v in values.items() if v is not None}  # 0 is a size
        size = {d: int(given.get(d, self.default_size[d])) for d in self.dims}
        if any(v < 1 for v in size.values()):
            raise InputError(f"{self.name} size must be positive, got {self.size_text(size)}",
                             f"give each of {', '.join(self.dims)} as an integer >= 1")
        return size

    #: Odd sides, no multiple of any tile or vector width: every edge path of a kernel runs.
    SANITIZE_SIDES = (67, 133)

    def sanitize_size(self) -> Size:
        """The small size every stage runs at under compute-sanitizer (``run --sanitize``): odd, so
        that no dimension is a multiple of a tile or a vector width; 67x133 for two dimensions,
        ``67 * 133 = 8911`` for one (a reduction's n), 67 for each further one. A case whose kernels
        need other sizes overrides it.

        Raises:
            InputError: the case refuses the size (:meth:`size`).
        """
        if len(self.dims) == 1:
            return self.size({self.dims[0]: self.SANITIZE_SIDES[0] * self.SANITIZE_SIDES[1]})
        sides = [*self.SANITIZE_SIDES, *[self.SANITIZE_SIDES[0]] * max(0, len(self.dims) - 2)]
        return self.size(dict(zip(self.dims, sides, strict=False)))

    def size_text(self, size: Size) -> str:
        """'8192x8192' for two dimensions, 'n=1024' for one."""
        if len(self.dims) == 1:
            return f"{self.dims[0]}={size[self.dims[0]]}"
        return "x".join(str(size[d]) for d in self.dims)

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        raise NotImplementedError

    # -- launching ----------------------------------------------------------------------------

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        raise NotImplementedError

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        raise NotImplementedError

    def steps(self, stage: Stage, inputs: Any, output: Any, size: Size, dtype: str) -> list[Step]:
        """The GPU operations of one run of ``stage``, in order: by default one profiled launch
        of the stage's kernel with :meth:`launch` and :meth:`kernel_args`. A case whose stage
        takes several launches (a reduction's passes) returns them all; event timing covers
        every step, ncu profiles the ``profiled`` ones."""
        return [Step(stage, self.guarded("launch", stage, self.launch, stage, size, dtype),
                     self.guarded("kernel_args", stage, self.kernel_args, stage, inputs, output, size))]

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """Random input, never zeros."""
        raise NotImplementedError

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        raise NotImplementedError

    def prepare_output(self, cupy: Any, stage: Stage, out: Any) -> None:
        """Called after the output is poisoned and before each validated or profiled launch:
        a kernel that accumulates into its output (atomics into histogram bins) zeroes it here.
        Default: nothing."""

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Any:
        raise NotImplementedError

    def compare(self, cupy: Any, out: Any, ref: Any) -> Comparison:
        raise NotImplementedError

    # -- report ------------------------------------------------------------------------------

    def stage_sources(self) -> dict[str, str]:
        """Stage id -> the source the report shows for it: the block between its ``// stage: ID``
        and ``// end stage`` markers in the kernel source."""
        return stage_sources(self.manifest.source_text())

    def normalize_source(self, source: str, stage_id: str) -> str:
        """A stage's source with what differs by design (its function name) made equal, so the
        diff between stages shows the one real change."""
        return source

    def stage_notes(self, row: Any, source: str | None) -> tuple[str, list[str]]:
        """(context line, warnings) the report shows beside a stage's conflict figures."""
        return "", []

    def experiments(self) -> tuple[Experiment, ...]:
        """Experiments beside the ladder (:mod:`profiler_report.model.experiment`): profiled by a
        live run into ``<id>.ncu-rep`` and shown as sections of the report. None by default."""
        return ()

    def bank_maps(self, dtype: str) -> list[dict[str, Any]]:
        """One warp's shared access per stage worth a picture, predicted from the tile layout:
        ``[{"stage", "title", "banks": per lane the banks it touches, "wavefronts", "ideal"}]``
        for ``dtype``'s elements. None by default."""
        return []

    #: The module of the case's benchmark (GPU), imported on first use; "" when it has none. It
    #: provides ``bench_at(case, size, dtype, repeats, stages, provenance)``, ``run_all(case,
    #: quick=, repeats=)``, ``sweep_points(case, ref, quick=, repeats=)``, ``bench_point(case,
    #: point)`` and ``HARNESS`` (a :class:`profiler_report.live.bench.Harness`: the row type, the
    #: table, the JSON), and may provide ``warm_peers(case, size, dtype)``; its peers are ``Peer``
    #: entries of the harness.
    bench_module: str = ""

    def _bench(self, what: str) -> Any:
        if not self.bench_module:
            raise InputError(f"case {self.name} has no {what}", "run `profiler-report run --no-peers` instead")
        return importlib.import_module(self.bench_module)

    def bench_at(self, size: Size, dtype: str, repeats: int, stages: list[Stage],
                 provenance: dict[str, Any]) -> dict[str, Any]:
        """The stages against the case's peers at one size (GPU): bench.json's content."""
        return self._bench("peers to time").bench_at(self, size, dtype, repeats, stages, provenance)

    def warm_peers(self, size: Size, dtype: str) -> None:
        """Build the case's peers and run each once at ``size`` and ``dtype``, untimed (GPU; the
        bench module's ``warm_peers`` where it has one, else nothing): the compiles and library
        starts that would otherwise fall inside the peers' step."""
        if self.bench_module:
            warm = getattr(importlib.import_module(self.bench_module), "warm_peers", None)
            if warm is not None:
                warm(self, size, dtype)

    def has_config_candidates(self, stage: Stage, dtype: str) -> bool:
        """Whether ``run`` chooses ``stage``'s configuration for its shape by timing candidates
        (the bench module's ``config_candidates``); False for a case without them."""
        if not self.bench_module:
            return False
        mod = importlib.import_module(self.bench_module)
        return hasattr(mod, "config_candidates") and bool(mod.config_candidates(self, stage, dtype))

    def choose_configs(self, size: Size, dtype: str, repeats: int, stage: Stage) -> dict[str, Any] | None:
        """Time ``stage``'s candidate configurations at ``size`` and choose one the way the bench
        sweep does per point (GPU; the bench module's ``run_choice``): a record with ``stage``,
        ``chosen``, ``targs``, ``chosen_us``, ``runner_up``, ``runner_up_us``, ``default``, ``how``;
        None when no candidate ran correctly."""
        return self._bench("configuration candidates").run_choice(self, size, dtype, repeats, stage)

    def bench(self, *, quick: bool, repeats: int) -> list[Any]:
        """Time the stages against the case's ceilings and peers (GPU); rows for bench.json."""
        return self._bench("benchmark").run_all(self, quick=quick, repeats=repeats)

    def sweep_points(self, ref: str, *, quick: bool, repeats: int) -> list[Any]:
        """:meth:`bench` as a list of live.fanout.SweepPoint work units (``ref``: how a worker
        process finds this case again, a name or a case folder), in the order bench runs them."""
        return self._bench("benchmark").sweep_points(self, ref, quick=quick, repeats=repeats)

    def bench_point(self, point: Any) -> list[Any]:
        """The rows of one :meth:`sweep_points` point, timed on this process's GPU."""
        return self._bench("benchmark").bench_point(self, point)

    def bench_row_type(self) -> type:
        """The dataclass of :meth:`bench_rows` (the point store checks stored rows against it)."""
        return self._bench("benchmark").HARNESS.row_type

    def bench_rows(self, dicts: list[dict[str, Any]]) -> list[Any]:
        """Bench rows back from their dicts (gathered from workers, or the point store)."""
        return self._bench("benchmark").HARNESS.rows(dicts)

    def bench_table(self, rows: list[Any]) -> str:
        """:meth:`bench` rows as the plain-text table ``profiler-report bench`` prints."""
        return self._bench("benchmark").HARNESS.table(rows)

    def bench_json(self, rows: list[Any], provenance: dict[str, Any]) -> dict[str, Any]:
        """:meth:`bench` rows as bench.json's content."""
        return self._bench("benchmark").HARNESS.as_json(rows, provenance)

def _frame_in(exc: BaseException, folder: Path) -> str:
    """'path/case.py:42' of the innermost traceback frame inside ``folder``; '' when none is."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).parent == folder]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
