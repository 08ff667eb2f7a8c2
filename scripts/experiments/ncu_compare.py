"""Experiment (H200, 2026-11-30): one launch each of torch.compile's transpose, the Triton peer,
vec_colwalk and tp_gen tile shapes, each in an NVTX range ``cmp_<name>`` for ncu to pick.

    ncu --nvtx --nvtx-include 'cmp_a/' ... python3 scripts/experiments/ncu_compare.py DTYPE ROWS COLS
"""

from __future__ import annotations

import sys
from pathlib import Path

import cupy
from cupy.cuda import nvtx
from profiler_report.live.bench import check_output, peers

from profiler_report import run as gpu
from profiler_report.model.manifest import load_manifest
from profiler_report.util.dtypes import CXX_TYPES

sys.path.insert(0, str(Path(__file__).parent))
from ceiling import launcher  # noqa: E402

dtype, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
manifest = load_manifest()
t = CXX_TYPES[dtype]
shapes = [(16, 16, 256), (16, 32, 256), (32, 32, 512)]
exprs = [f"tp_gen<{t},{a},{b},{c}>" for a, b, c in shapes]
mod = cupy.RawModule(code=(Path(__file__).parent / "ceiling_variants.cu").read_text(),
                     options=("-std=c++17",), name_expressions=exprs)
smod, snames = gpu.compile_module(manifest, dtype)
k = gpu.Kernels(smod, snames, dtype, manifest.tile)
v = 16 // {"float16": 2, "float32": 4, "float64": 8}[dtype]
fns = {}
for (a, b, c), e in zip(shapes, exprs, strict=True):
    fns[f"gen_r{a}c{b}t{c}"] = launcher(mod.get_function(e), {"kind": "gen", "trc": a, "tcc": b, "nt": c,
                                                              "smem": a * b * v * 16}, dtype, rows, cols, 132)
st = manifest.stage("vec_colwalk")
fns["colwalk"] = lambda s, o: k.launch(st, s, o, rows, cols)
p = peers(cupy, dtype)
fns["torchcompile"] = p["torch.compile t().contiguous()"][0]
fns["triton"] = p["triton transpose"][0]
pairs = gpu.make_pairs(cupy, rows, cols, dtype, 1)
for name, fn in fns.items():
    print(name, check_output(cupy, name, fn, pairs) or "ok", flush=True)
    for _ in range(3):
        fn(*pairs[0])
    cupy.cuda.runtime.deviceSynchronize()
    nvtx.RangePush(f"cmp_{name}")
    fn(*pairs[0])
    cupy.cuda.runtime.deviceSynchronize()
    nvtx.RangePop()
