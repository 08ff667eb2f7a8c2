"""The padding sweep on the GPU (ncu's target process): compile every point, validate it bit for
bit against ``cupy.transpose``, then launch it once inside its NVTX range."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_report.cases.transpose.padding_points import POINTS, SIZE, SOURCE, launch_shape, name_expression
from profiler_report.live.gpu import KernelModules, compile_kernels, import_cupy, poison, push_range


def compile_points() -> KernelModules:
    """Every point's kernel (``padding_sweep.cu`` instantiated per point), through CuPy's disk cache."""
    return compile_kernels(import_cupy(), SOURCE.read_text(), ("-std=c++17", "-lineinfo"),
                           [name_expression(p) for p in POINTS])


def run_points(case: Any, experiment: Any) -> list[dict[str, Any]]:
    """Validate and profile every point; ``[{"point", "correct", "message"}]`` in point order."""
    cupy = import_cupy()
    module = compile_points()
    rows, cols = SIZE["rows"], SIZE["cols"]
    results = []
    for p in POINTS:
        fn = module.get_function(name_expression(p))
        grid, block = launch_shape(p, rows, cols)
        a = case.make_input(cupy, SIZE, p.dtype, 1)
        out = cupy.empty((cols, rows), dtype=p.dtype)
        poison(cupy, out)
        args = (a, out, np.int32(rows), np.int32(cols))
        fn(grid, block, args)  # the validation launch, outside every range: also the warm-up
        cupy.cuda.runtime.deviceSynchronize()
        got = case.compare(cupy, out, cupy.ascontiguousarray(a.T))
        message = "" if got.ok else (f"{got.mismatches} elements differ, first at out{list(got.first_wrong or ())} "
                                     f"(expected {got.expected}, got {got.got})")
        results.append({"point": p.id, "correct": got.ok, "message": message})
        if got.ok:
            with push_range(experiment.range_name(case.name, p.id)):
                fn(grid, block, args)
            cupy.cuda.runtime.deviceSynchronize()
    return results
