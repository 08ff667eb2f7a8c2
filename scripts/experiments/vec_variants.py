"""Experiment (H200, 2026-11-29): variants of the vec_deep stage, one change each.

Micro-rows per warp (DEPTH 1, 2, 4), cache-streaming loads/stores (__ldcs/__stcs),
__launch_bounds__ minimum blocks, and swapped grid axes ("swapgrid", which became the
vec_colwalk stage). Every variant is checked bit for bit before it is timed.

Run on a GPU from the repository root: PYTHONPATH=$PWD python3 scripts/experiments/vec_variants.py
"""

from __future__ import annotations

import cupy
import numpy as np
from profiler_report.live.bench import check_output, event_time

from profiler_report import run as gpu
from profiler_report.model.manifest import load_manifest

LOAD = "*reinterpret_cast<const uint4*>(in + (size_t)r * cols + col)"
STORE = "*reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc) = o.u;"
ORIGIN = "const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;"


def variants(body: str) -> dict[str, tuple[str, int]]:
    """name -> (kernel source, DEPTH)."""
    ldcs = body.replace(LOAD, "__ldcs(reinterpret_cast<const uint4*>(in + (size_t)r * cols + col))")
    stcs = body.replace(STORE, "__stcs(reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc), o.u);")
    return {
        "depth1": (body, 1), "depth2": (body, 2), "depth4": (body, 4),
        "ldcs": (ldcs, 2), "stcs": (stcs, 2),
        "lb256x4": (body.replace("__launch_bounds__(256)", "__launch_bounds__(256, 4)"), 2),
        "swapgrid": (body.replace(ORIGIN, "const int r0 = blockIdx.x * TR, c0 = blockIdx.y * TC;"), 2),
    }


def main() -> None:
    src = load_manifest().source_text()
    a = src.index("// stage: vec_deep")
    b = src.index("// end stage", a)
    cases = [("float32", "float", 8192, 8192), ("float32", "float", 16384, 16384),
             ("float16", "unsigned short", 8192, 16384), ("float64", "double", 8192, 4096)]
    for dtype, ctype, rows, cols in cases:
        v = 16 // np.dtype(dtype).itemsize
        pairs = gpu.make_pairs(cupy, rows, cols, dtype, 3)
        base = np.median(event_time(cupy, gpu.memcpy_fn(cupy), pairs, 30, 5))
        for name, (body, depth) in variants(src[a:b]).items():
            kname = f"transpose_vec_deep<{ctype},{depth}>"
            mod = cupy.RawModule(code=src[:a] + body + src[b:], options=("-std=c++17",), name_expressions=[kname])
            fn = mod.get_function(kname)
            smem = 32 * v * 8 * depth * 16
            if smem > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = smem
            gx, gy = (cols + 32 * v - 1) // (32 * v), (rows + 8 * v * depth - 1) // (8 * v * depth)
            grid = (gy, gx) if name == "swapgrid" else (gx, gy)

            def launch(s, o, fn=fn, grid=grid, smem=smem, rows=rows, cols=cols):
                fn(grid, (256,), (s, o, np.int32(rows), np.int32(cols)), shared_mem=smem)

            bad = check_output(cupy, name, launch, pairs)
            us = np.median(event_time(cupy, launch, pairs, 40, 5))
            print(f"{dtype} {rows}x{cols} {name:9}: {us:8.1f} us {100 * base / us:5.1f}% of memcpy {bad}", flush=True)


if __name__ == "__main__":
    main()
