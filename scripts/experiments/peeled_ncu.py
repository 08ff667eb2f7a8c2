"""Launch a few transpose kernels once each, for `ncu` (GPU): python3 peeled_ncu.py [torch]."""

from __future__ import annotations

import sys
from dataclasses import replace

from profiler_report.cases.transpose.bench import COPIES
from profiler_report.live.gpu import import_cupy
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.registry import get_case

RUNS = (("vec_tuned", (16, 16, 256), 8192, 8192), ("vec_peeled", (32, 16, 512), 8192, 8192),
        ("vec_peeled", (32, 16, 512), 8191, 8193), ("vec_peeled", (32, 8, 256), 8191, 8193),
        ("copy 16B x1", None, 8191, 8193))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    dtype = "float32"
    stages = []
    for sid, cfg, _, _ in RUNS:
        base = next((s for s in case.manifest.stages if s.id == sid), None) or next(c for c in COPIES if c.id == sid)
        stages.append(replace(base, targs=tuple(str(x) for x in cfg)) if cfg else base)
    module, names = compile_module(case, dtype, extra=tuple(stages))
    k = Kernels(module, names, dtype, case)
    for st, (_, _, r, c) in zip(stages, RUNS, strict=True):
        a = case.make_input(cupy, {"rows": r, "cols": c}, dtype, seed=1)
        out = cupy.empty((c, r), dtype=dtype)
        k.launch(st, a, out, {"rows": r, "cols": c})
        cupy.cuda.runtime.deviceSynchronize()
    if "torch" in sys.argv:
        import torch
        f = torch.compile(lambda x: x.t().contiguous())
        x = torch.rand(8191, 8193, device="cuda")
        for _ in range(3):
            f(x)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("torchprof")
        f(x)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
