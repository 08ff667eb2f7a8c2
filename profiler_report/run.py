"""Run stage (GPU side): build the kernels, check each variant, time it, launch it for ncu.

Everything here needs CuPy and an NVIDIA GPU; the module imports CuPy lazily so the rest of the
tool (and ``--help``) works on machines without one.

Also the target process of ``ncu`` (``python -m profiler_report.run profile ...``): it validates
each stage, then launches each one exactly once inside an NVTX push/pop range ``pr_<stage>``, the
range that ``ncu --nvtx-include pr_<stage>/`` filters on. Warm-up and validation launches sit
outside every range, so ncu profiles one launch per stage.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import asdict, dataclass, replace
from typing import Any

from .config import CXX_TYPES, ITEMSIZE, Manifest, Stage, load_manifest
from .errors import NoGpuError

NVTX_PREFIX = "pr_"


def nvtx_range_name(stage_id: str) -> str:
    """NVTX push/pop range around a stage's profiled launch (the ``--nvtx-include`` filter)."""
    return f"{NVTX_PREFIX}{stage_id}"


def import_cupy() -> Any:
    """Import CuPy and check that a GPU is visible.

    Raises:
        NoGpuError: CuPy is not installed or no CUDA device can be used.
    """
    try:
        import cupy
    except ImportError as exc:
        raise NoGpuError(f"CuPy is not installed ({exc})") from exc
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise NoGpuError("no CUDA device is visible")
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise NoGpuError(f"no usable CUDA device ({exc})") from exc
    return cupy


def device_info() -> dict[str, Any]:
    """GPU name, SM count, compute capability, driver and runtime versions, CuPy version."""
    cupy = import_cupy()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    drv = cupy.cuda.runtime.driverGetVersion()
    rt = cupy.cuda.runtime.runtimeGetVersion()
    return {
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "sm_count": int(props["multiProcessorCount"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "cuda_driver_api": f"{drv // 1000}.{drv % 1000 // 10}",
        "cuda_runtime": f"{rt // 1000}.{rt % 1000 // 10}",
        "cupy": cupy.__version__,
        "l2_bytes": int(props.get("l2CacheSize", 0)),
    }


#: Key of a compiled kernel: the kernel name and its template arguments after the element type.
KernelKey = tuple[str, tuple[str, ...]]


def kernel_key(stage: Stage) -> KernelKey:
    return stage.kernel, stage.targs


def _names(manifest: Manifest, dtype: str, extra: tuple[Stage, ...] = ()) -> dict[KernelKey, str]:
    ctype = CXX_TYPES[dtype]
    stages = [*manifest.stages, manifest.ceiling, *([manifest.regression] if manifest.regression else []), *extra]
    return {kernel_key(s): s.name_expression(ctype) for s in stages}


def compile_module(manifest: Manifest, dtype: str, extra_options: tuple[str, ...] = (),
                   extra: tuple[Stage, ...] = ()) -> tuple[Any, dict[KernelKey, str]]:
    """Compile ``kernels/transpose.cu`` with NVRTC for this device, with ``-lineinfo``.

    ``extra`` are stages outside the manifest to instantiate too (the bench's copy kernels and
    tile shapes).

    Returns:
        (cupy.RawModule, map kernel key -> name expression of its ``dtype`` instantiation)
    """
    cupy = import_cupy()
    names = _names(manifest, dtype, extra)
    module = cupy.RawModule(
        code=manifest.source_text(),
        options=("-std=c++17", "-lineinfo", *extra_options),
        name_expressions=list(names.values()),
    )
    return module, names


#: Micro-rows per warp of ``transpose_vec_deep`` and ``transpose_vec_colwalk`` (their DEPTH default).
VEC_DEEP_DEPTH = 2
#: Bytes per access of copy_wide's word types.
WORD_BYTES = {"unsigned int": 4, "uint2": 8, "uint4": 16}


def tuned_shape(stage: Stage) -> tuple[int, int, int]:
    """(micro-block rows, micro-block columns, threads per block) of a ``vec_tuned`` launch."""
    trc, tcc, nt = (int(a) for a in stage.targs)
    return trc, tcc, nt


def dynamic_smem_bytes(stage: Stage, dtype: str) -> int:
    """Dynamic shared memory of a launch in bytes: the 16-byte-chunk tiles of the deep stages."""
    v = 16 // ITEMSIZE[dtype]
    if stage.launch in ("vec_deep", "vec_colwalk"):
        return 32 * v * 8 * VEC_DEEP_DEPTH * 16
    if stage.launch == "vec_tuned":
        trc, tcc, _ = tuned_shape(stage)
        return trc * tcc * v * 16
    return 0


def launch_shape(stage: Stage, rows: int, cols: int, dtype: str, tile: int = 32) -> tuple[tuple, tuple]:
    """(grid, block) of a stage's launch for a ``rows x cols`` input."""
    v = 16 // ITEMSIZE[dtype]
    if stage.launch == "vec":
        return ((cols + 32 * v - 1) // (32 * v), (rows + 8 * v - 1) // (8 * v)), (256,)
    if stage.launch in ("vec_deep", "vec_colwalk"):
        depth = VEC_DEEP_DEPTH
        gx, gy = (cols + 32 * v - 1) // (32 * v), (rows + 8 * v * depth - 1) // (8 * v * depth)
        return ((gx, gy) if stage.launch == "vec_deep" else (gy, gx)), (256,)
    if stage.launch == "vec_tuned":
        trc, tcc, nt = tuned_shape(stage)
        return (-(-rows // (trc * v)) * -(-cols // (tcc * v)),), (nt,)
    if stage.launch == "copy_wide":
        words = rows * cols * ITEMSIZE[dtype] // WORD_BYTES[stage.targs[0]]
        per_block = 256 * int(stage.targs[1])
        return (max(1, -(-words // per_block)),), (256,)
    return ((cols + tile - 1) // tile, (rows + tile - 1) // tile), (32, 8)


@dataclass
class Kernels:
    """A compiled module plus the launch logic of each stage."""

    module: Any
    names: dict[KernelKey, str]
    dtype: str
    tile: int = 32

    def launch(self, stage: Stage, src: Any, dst: Any, rows: int, cols: int) -> None:
        import numpy as np

        fn = self.module.get_function(self.names[kernel_key(stage)])
        grid, block = launch_shape(stage, rows, cols, self.dtype, self.tile)
        smem = dynamic_smem_bytes(stage, self.dtype)
        if smem > 48 * 1024:  # above 48 KB the kernel must opt in
            fn.max_dynamic_shared_size_bytes = smem
        fn(grid, block, (src, dst, np.int32(rows), np.int32(cols)), shared_mem=smem)


@dataclass
class Validation:
    """Outcome of one stage's correctness check (random input, poisoned output, exact compare)."""

    stage: str
    rows: int
    cols: int
    dtype: str
    correct: bool
    mismatches: int = 0
    first_wrong: tuple[int, int] | None = None  # (row, col) of the output
    message: str = ""


def random_matrix(cupy: Any, rows: int, cols: int, dtype: str, seed: int = 0) -> Any:
    """Uniform values in [1, 2): random, never zero, exactly representable after the cast."""
    rng = cupy.random.default_rng(seed)
    return (rng.random((rows, cols), dtype=cupy.float32) + 1).astype(dtype)


def poison(cupy: Any, arr: Any) -> None:
    """Fill with all-ones bytes (NaN for floats) so unwritten elements never match."""
    arr.view(cupy.uint8).fill(0xFF)


def _bits(cupy: Any, arr: Any) -> Any:
    return arr.view({2: cupy.uint16, 4: cupy.uint32, 8: cupy.uint64}[arr.dtype.itemsize])


def validate(kernels: Kernels, stage: Stage, rows: int, cols: int, seed: int = 0) -> Validation:
    """Run ``stage`` once on random input and compare its output bit for bit with the reference.

    The reference is ``cupy.ascontiguousarray(a.T)`` for a transpose and ``a`` itself for a copy
    (``stage.op == "copy"``). The output is poisoned (all-ones bytes) before the launch.
    """
    cupy = import_cupy()
    a = random_matrix(cupy, rows, cols, kernels.dtype, seed)
    shape = (rows, cols) if stage.op == "copy" else (cols, rows)
    out = cupy.empty(shape, dtype=kernels.dtype)
    poison(cupy, out)
    kernels.launch(stage, a, out, rows, cols)
    cupy.cuda.runtime.deviceSynchronize()
    ref = a if stage.op == "copy" else cupy.ascontiguousarray(a.T)
    wrong = cupy.flatnonzero(_bits(cupy, out) != _bits(cupy, ref))
    n = int(wrong.size)
    if n == 0:
        return Validation(stage.id, rows, cols, kernels.dtype, True)
    r, c = divmod(int(wrong[0]), shape[1])
    return Validation(
        stage.id, rows, cols, kernels.dtype, False, n, (r, c),
        f"stage {stage.id} is wrong at {rows}x{cols} {kernels.dtype}: {n} of {rows * cols} output "
        f"elements differ, first at out[{r}, {c}] (expected {ref[r, c].item()!r}, got {out[r, c].item()!r})",
    )


@dataclass
class Timing:
    """Event-timed launches of one stage (or a peer) at one size. Times in microseconds.

    Source: CUDA events around each launch, after warm-up, rotating ``buffers`` input/output
    pairs; GB/s counts bytes read + written (2 * rows * cols * itemsize) / median time.
    """

    name: str
    rows: int
    cols: int
    dtype: str
    repeats: int
    median_us: float
    p10_us: float
    p90_us: float
    min_us: float
    gbps: float
    source: str = "cuda-events"


def time_launches(name: str, fn: Any, pairs: list[tuple[Any, Any]], rows: int, cols: int,
                  dtype: str, repeats: int, warmup: int) -> Timing:
    """Median of ``repeats`` event-timed calls of ``fn(src, dst)``, rotating buffer pairs."""
    cupy = import_cupy()
    for i in range(warmup):
        fn(*pairs[i % len(pairs)])
    cupy.cuda.runtime.deviceSynchronize()
    starts = [cupy.cuda.Event() for _ in range(repeats)]
    ends = [cupy.cuda.Event() for _ in range(repeats)]
    for i in range(repeats):
        src, dst = pairs[i % len(pairs)]
        starts[i].record()
        fn(src, dst)
        ends[i].record()
    ends[-1].synchronize()
    us = sorted(cupy.cuda.get_elapsed_time(s, e) * 1000.0 for s, e in zip(starts, ends, strict=True))
    q = statistics.quantiles(us, n=10)
    med = statistics.median(us)
    nbytes = 2 * rows * cols * ITEMSIZE[dtype]
    return Timing(name, rows, cols, dtype, repeats, med, q[0], q[-1], us[0], nbytes / (med * 1e3))


def make_pairs(cupy: Any, rows: int, cols: int, dtype: str, buffers: int) -> list[tuple[Any, Any]]:
    return [
        # The output buffer also serves the copy kernels: they write the same number of bytes.
        (random_matrix(cupy, rows, cols, dtype, seed=i + 1), cupy.empty((cols, rows), dtype=dtype))
        for i in range(buffers)
    ]


def memcpy_fn(cupy: Any) -> Any:
    def fn(src: Any, dst: Any) -> None:
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                      cupy.cuda.runtime.memcpyDeviceToDevice,
                                      cupy.cuda.get_current_stream().ptr)
    return fn


def time_stages(kernels: Kernels, stages: list[Stage], rows: int, cols: int,
                repeats: int, warmup: int, buffers: int) -> list[Timing]:
    """Event-time each stage and cupy's device-to-device memcpy (the ceiling) at one size."""
    cupy = import_cupy()
    pairs = make_pairs(cupy, rows, cols, kernels.dtype, buffers)
    out = [time_launches("memcpy", memcpy_fn(cupy), pairs, rows, cols, kernels.dtype, repeats, warmup)]
    for st in stages:
        def fn(src: Any, dst: Any, st: Stage = st) -> None:
            kernels.launch(st, src, dst, rows, cols)
        out.append(time_launches(st.id, fn, pairs, rows, cols, kernels.dtype, repeats, warmup))
    return out


def _push_range(name: str) -> Any:
    try:
        import nvtx

        return nvtx.annotate(name)
    except ImportError:  # CuPy's own NVTX binding marks the same default domain
        import contextlib

        from cupy.cuda import nvtx as cnvtx

        @contextlib.contextmanager
        def rng() -> Any:
            cnvtx.RangePush(name)
            try:
                yield
            finally:
                cnvtx.RangePop()

        return rng()


def profile_launches(kernels: Kernels, stages: list[Stage], rows: int, cols: int) -> list[Validation]:
    """Target side of ncu: validate, warm up, then one launch per stage in its NVTX range."""
    cupy = import_cupy()
    results = [validate(kernels, st, rows, cols) for st in stages]
    a = random_matrix(cupy, rows, cols, kernels.dtype, seed=1)
    out = cupy.empty((cols, rows), dtype=kernels.dtype)  # a copy writes the same number of bytes
    for st, v in zip(stages, results, strict=True):
        if not v.correct:
            continue
        kernels.launch(st, a, out, rows, cols)  # warm-up, outside every range
        cupy.cuda.runtime.deviceSynchronize()
        with _push_range(nvtx_range_name(st.id)):
            kernels.launch(st, a, out, rows, cols)
            cupy.cuda.runtime.deviceSynchronize()
    return results


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m profiler_report.run",
                                description="ncu target: one profiled launch per stage")
    p.add_argument("mode", choices=["profile"])
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--cols", type=int, required=True)
    p.add_argument("--dtype", required=True)
    p.add_argument("--stages", required=True,
                   help="comma-separated stage ids; ID:OTHER launches stage OTHER's kernel under ID's range "
                        "(how the deliberately regressed fixture is recorded)")
    p.add_argument("--manifest", default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from pathlib import Path

    args = _parse(sys.argv[1:] if argv is None else argv)
    manifest = load_manifest(Path(args.manifest) if args.manifest else None)
    module, names = compile_module(manifest, args.dtype)
    kernels = Kernels(module, names, args.dtype, manifest.tile)
    stages = []
    for item in args.stages.split(","):
        label, _, kernel_of = item.partition(":")
        st = manifest.stage(kernel_of or label)
        stages.append(replace(st, id=label) if kernel_of else st)
    results = profile_launches(kernels, stages, args.rows, args.cols)
    bad = [v for v in results if not v.correct]
    for v in bad:
        print(f"profiler-report: {v.message}", file=sys.stderr)
    print("profiler-report-validation " + " ".join(f"{v.stage}={'ok' if v.correct else 'WRONG'}" for v in results))
    return 1 if bad else 0


def asdicts(items: list[Any]) -> list[dict[str, Any]]:
    return [asdict(i) for i in items]


if __name__ == "__main__":
    sys.exit(main())
