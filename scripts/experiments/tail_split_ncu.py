"""Launch vec_realigned once per run, its last wave split by the GPU's rule or not at all, and a
16-byte copy, for `ncu` (GPU): python3 scripts/experiments/tail_split_ncu.py (run order = RUNS)."""

from __future__ import annotations

from dataclasses import replace

from realigned import realigned  # run from the repo root: this folder is sys.path[0]

from profiler_report.cases import get_case
from profiler_report.cases.transpose.bench import COPIES
from profiler_report.live.gpu import import_cupy
from profiler_report.live.kernels import Kernels, compile_module, kernel_key

#: (configuration or "copy", rows, cols, dtype, split by the rule)
RUNS = (((16, 16, 256), 4097, 8191, "float16", True), ((16, 16, 256), 4097, 8191, "float16", False),
        ((16, 16, 256), 8191, 8193, "float16", True), ((16, 16, 256), 8191, 8193, "float16", False),
        ((16, 16, 256), 12345, 6789, "float16", True), ((16, 16, 256), 7919, 7907, "float16", True),
        ((16, 16, 256), 8192, 8192, "float16", True), ((16, 16, 256), 8192, 8192, "float16", False),
        ((16, 32, 512), 8191, 8193, "float32", True), ((16, 32, 512), 8192, 8192, "float32", True),
        ((32, 32, 512), 8191, 8193, "float64", True), ((32, 32, 512), 8192, 8192, "float64", True),
        ((32, 16, 512, 2), 16384, 16384, "float64", True),
        ("copy", 8192, 8192, "float16", True), ("copy", 16384, 16384, "float64", True))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    copy = next(c for c in COPIES if c.targs[0] == "uint4")
    for cfg, r, c, dtype, split in RUNS:
        st = replace(copy) if cfg == "copy" else realigned(*cfg)
        module, names = compile_module(case, dtype, extra=(st,))
        k = Kernels(module, names, dtype, case)
        size = {"rows": r, "cols": c}
        launch = case.launch(st, size, dtype)
        if not split:
            k.resident[(kernel_key(st), launch.block[0], launch.shared_bytes)] = 1  # no remainder: none split
        a = case.make_input(cupy, size, dtype, seed=1)
        out = cupy.empty((r, c) if cfg == "copy" else (c, r), dtype=dtype)
        k.launch(st, a, out, size)
        cupy.cuda.runtime.deviceSynchronize()
        ref = a if cfg == "copy" else cupy.ascontiguousarray(a.T)
        print(cfg, r, c, dtype, "split" if split else "none", "exact" if case.compare(cupy, out, ref).ok else "WRONG",
              flush=True)


if __name__ == "__main__":
    main()
