"""Kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from profiler_report.cases.manifest import Manifest, Stage
from profiler_report.live.gpu import (
    Timing,
    _bits,
    import_cupy,
    make_pairs,
    memcpy_fn,
    poison,
    random_matrix,
    time_launches,
)
from profiler_report.util.dtypes import CXX_TYPES, ITEMSIZE

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
